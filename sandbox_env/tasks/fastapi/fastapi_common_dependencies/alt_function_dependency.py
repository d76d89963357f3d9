# a plain function dependency returning a dict instead of a class
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI

ITEMS = [{"item_name": "Foo"}, {"item_name": "Bar"}, {"item_name": "Baz"}]
USERS = [{"username": "alice"}, {"username": "bob"}, {"username": "carol"}, {"username": "dave"}]


def commons(q: str | None = None, skip: int = 0, limit: int = 100) -> dict:
    return {"q": q, "skip": skip, "limit": limit}


Commons = Annotated[dict, Depends(commons)]
router = APIRouter()


@router.get("/items/")
def read_items(c: Commons):
    return {**c, "items": ITEMS[c["skip"] : c["skip"] + c["limit"]]}


@router.get("/users/")
def read_users(c: Commons):
    return {**c, "users": USERS[c["skip"] : c["skip"] + c["limit"]]}


app = FastAPI()
app.include_router(router)
