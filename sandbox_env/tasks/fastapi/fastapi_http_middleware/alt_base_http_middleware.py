# a BaseHTTPMiddleware subclass added with add_middleware instead of the decorator
import time

from typing import Any

from fastapi import Body, FastAPI
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse


class Headers(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        if request.headers.get("X-Block") == "yes":
            return JSONResponse({"detail": "blocked"}, status_code=403)
        began = time.monotonic()
        response = await call_next(request)
        response.headers["X-Process-Time"] = f"{time.monotonic() - began:.6f}"
        response.headers["X-App-Version"] = "2.1"
        return response


app = FastAPI()
app.add_middleware(Headers)


@app.get("/ping")
def ping():
    return {"ping": "pong"}


@app.post("/echo")
def echo(body: Any = Body(...)):
    return body
