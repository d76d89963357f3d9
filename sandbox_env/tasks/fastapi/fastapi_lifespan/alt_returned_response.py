# the lifespan as a nested context manager class; 503 returned as a JSONResponse, state read from request.app
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

ml_models: dict = {}


def answer(x: float) -> float:
    return x * 42


@asynccontextmanager
async def lifespan(application: FastAPI):
    ml_models.update(answer=answer)
    application.state.started = True
    try:
        yield {"greeting": "hello from lifespan"}
    finally:
        ml_models.clear()


app = FastAPI(lifespan=lifespan)


@app.get("/predict")
def predict(x: float):
    model = ml_models.get("answer")
    if model is None:
        return JSONResponse({"detail": "Model not loaded"}, status_code=503)
    return {"result": model(x)}


@app.get("/status")
def status(request: Request):
    return {"models": sorted(ml_models.keys()), "started": request.app.state.started, "greeting": request.state.greeting}
