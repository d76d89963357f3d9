from typing import Annotated

from fastapi import Depends, FastAPI

app = FastAPI()

ITEMS = [{"item_name": "Foo"}, {"item_name": "Bar"}, {"item_name": "Baz"}]
USERS = [{"username": "alice"}, {"username": "bob"}, {"username": "carol"}, {"username": "dave"}]


class CommonQueryParams:
    def __init__(self, q: str | None = None, skip: int = 0, limit: int = 100):
        self.q = q
        self.skip = skip
        self.limit = limit


@app.get("/items/")
def read_items(commons: Annotated[CommonQueryParams, Depends(CommonQueryParams)]):
    return {"q": commons.q, "skip": commons.skip, "limit": commons.limit,
            "items": ITEMS[commons.skip : commons.skip + commons.limit]}


@app.get("/users/")
def read_users(commons: Annotated[CommonQueryParams, Depends()]):
    return {"q": commons.q, "skip": commons.skip, "limit": commons.limit,
            "users": USERS[commons.skip : commons.skip + commons.limit]}
