from typing import Annotated

from fastapi import Depends, FastAPI, Request

app = FastAPI()


def stamp(request: Request, step: int = 1) -> int:
    request.state.calls = getattr(request.state, "calls", 0) + step
    return request.state.calls


def sub_a(value: Annotated[int, Depends(stamp)]) -> int:
    return value


@app.get("/cached")
def cached(
    request: Request,
    a: Annotated[int, Depends(sub_a)],
    b: Annotated[int, Depends(stamp)],
    c: Annotated[int, Depends(stamp)],
):
    return {"a": a, "b": b, "c": c, "calls": request.state.calls}


@app.get("/uncached")
def uncached(
    request: Request,
    a: Annotated[int, Depends(sub_a)],
    b: Annotated[int, Depends(stamp, use_cache=False)],
    c: Annotated[int, Depends(stamp)],
):
    return {"a": a, "b": b, "c": c, "calls": request.state.calls}
