# the two dependencies on an APIRouter that holds /items/, default-value Header() parameters
from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException


def verify_token(x_token: str = Header()):
    if x_token == "fake-super-secret-token":
        return
    raise HTTPException(400, "X-Token header invalid")


def verify_key(x_key: str = Header()):
    if x_key == "fake-super-secret-key":
        return x_key
    raise HTTPException(400, "X-Key header invalid")


guarded = APIRouter(dependencies=[Depends(verify_token), Depends(verify_key)])


@guarded.get("/items/")
def read_items():
    return [{"item": name} for name in ("Foo", "Bar")]


app = FastAPI()
app.include_router(guarded)


@app.get("/public")
def public():
    return {"public": True}
