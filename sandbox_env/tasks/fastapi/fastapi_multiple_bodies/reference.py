from typing import Annotated

from fastapi import Body, FastAPI
from pydantic import BaseModel

app = FastAPI()


class Item(BaseModel):
    name: str
    price: float


class User(BaseModel):
    username: str
    full_name: str | None = None


@app.put("/items/{item_id}")
def update_item(item_id: int, item: Item, user: User, importance: Annotated[int, Body(gt=0)], q: str | None = None):
    result = {"item_id": item_id, "item": item, "user": user, "importance": importance}
    if q:
        result["q"] = q
    return result
