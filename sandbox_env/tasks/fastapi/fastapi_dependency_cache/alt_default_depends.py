# default-value Depends() instead of Annotated, the counter read through request.state's dict
from fastapi import Depends, FastAPI, Request

app = FastAPI()


def stamp(request: Request, step: int = 1) -> int:
    calls = getattr(request.state, "calls", 0)
    request.state.calls = calls + step
    return request.state.calls


def sub_a(value: int = Depends(stamp)) -> int:
    return value


def report(request: Request, a: int, b: int, c: int) -> dict:
    return {"a": a, "b": b, "c": c, "calls": request.state.calls}


@app.get("/cached")
async def cached(request: Request, a: int = Depends(sub_a), b: int = Depends(stamp), c: int = Depends(stamp)):
    return report(request, a, b, c)


@app.get("/uncached")
async def uncached(
    request: Request,
    a: int = Depends(sub_a),
    b: int = Depends(stamp, use_cache=False),
    c: int = Depends(stamp),
):
    return report(request, a, b, c)
