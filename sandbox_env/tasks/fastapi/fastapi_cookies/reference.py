from typing import Annotated

from fastapi import Cookie, FastAPI, Response

app = FastAPI()


@app.get("/session")
def read_session(session_id: Annotated[str | None, Cookie()] = None):
    return {"session_id": session_id}


@app.post("/login")
def login(user: str, response: Response):
    response.set_cookie(key="session_id", value=f"sess-{user}", httponly=True)
    return {"logged_in": user}


@app.post("/logout")
def logout(response: Response):
    response.delete_cookie(key="session_id")
    return {"logged_out": True}
