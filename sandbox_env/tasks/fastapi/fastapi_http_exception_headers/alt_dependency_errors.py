# the lookup and the token check as dependencies that raise; Annotated header
from typing import Annotated

from fastapi import Depends, FastAPI, Header, HTTPException, status

ITEMS = {"foo": "The Foo Wrestlers", "bar": "The Bar Tenders"}

app = FastAPI()


def known_item(item_id: str) -> str:
    try:
        return ITEMS[item_id]
    except KeyError:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Item not found", {"X-Error": "There goes my error"}) from None


def token(x_token: Annotated[str | None, Header()] = None) -> None:
    if x_token != "letmein":
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Missing or wrong token", {"WWW-Authenticate": "Token"})


@app.get("/items/{item_id}")
async def read_item(item: Annotated[str, Depends(known_item)]):
    return {"item": item}


@app.get("/secure/{item_id}", dependencies=[Depends(token)])
async def read_secure(item_id: str):
    return {"item": known_item(item_id)}
