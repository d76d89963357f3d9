import time

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

app = FastAPI()


@app.middleware("http")
async def add_headers(request: Request, call_next):
    if request.headers.get("x-block") == "yes":
        return JSONResponse(status_code=403, content={"detail": "blocked"})
    start = time.perf_counter()
    response = await call_next(request)
    response.headers["X-Process-Time"] = str(time.perf_counter() - start)
    response.headers["X-App-Version"] = "2.1"
    return response


@app.get("/ping")
async def ping():
    return {"ping": "pong"}


@app.post("/echo")
async def echo(request: Request):
    return await request.json()
