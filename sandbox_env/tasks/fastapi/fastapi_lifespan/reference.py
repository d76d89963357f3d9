from contextlib import asynccontextmanager

from fastapi import FastAPI, HTTPException, Request

ml_models: dict = {}


@asynccontextmanager
async def lifespan(app: FastAPI):
    ml_models["answer"] = lambda x: x * 42
    app.state.started = True
    yield {"greeting": "hello from lifespan"}
    ml_models.clear()


app = FastAPI(lifespan=lifespan)


@app.get("/predict")
async def predict(x: float):
    if "answer" not in ml_models:
        raise HTTPException(status_code=503, detail="Model not loaded")
    return {"result": ml_models["answer"](x)}


@app.get("/status")
async def status(request: Request):
    return {
        "models": sorted(ml_models),
        "started": getattr(request.app.state, "started", False),
        "greeting": request.state.greeting,
    }
