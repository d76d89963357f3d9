# responses built by hand (JSONResponse), cookies set and deleted on them
from fastapi import Cookie, FastAPI
from fastapi.responses import JSONResponse

app = FastAPI()


@app.get("/session")
async def read_session(session_id: str | None = Cookie(default=None)):
    return JSONResponse({"session_id": session_id})


@app.post("/login")
async def login(user: str):
    response = JSONResponse({"logged_in": user})
    response.set_cookie("session_id", "sess-" + user, httponly=True)
    return response


@app.post("/logout")
async def logout():
    response = JSONResponse({"logged_out": True})
    response.delete_cookie("session_id")
    return response
