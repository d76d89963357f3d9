# the 404 as a dependency, the store holding model instances, return annotations instead of response_model=
from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException
from pydantic import BaseModel


class Item(BaseModel):
    name: str | None = None
    description: str | None = None
    price: float | None = None
    tax: float = 10.5
    tags: list[str] = []


items = {
    "foo": {"name": "Foo", "price": 50.2},
    "bar": {"name": "Bar", "description": "The bartenders", "price": 62, "tax": 20.2},
    "baz": {"name": "Baz", "description": None, "price": 50.2, "tax": 10.5, "tags": []},
}
store: dict[str, Item] = {key: Item.model_validate(value) for key, value in items.items()}

app = FastAPI()


def existing(item_id: str) -> str:
    if item_id not in store:
        raise HTTPException(404, "Item not found")
    return item_id


Known = Annotated[str, Depends(existing)]


@app.get("/items/{item_id}")
async def read_item(item_id: Known) -> Item:
    return store[item_id]


@app.put("/items/{item_id}")
async def replace_item(item_id: Known, item: Item) -> Item:
    store[item_id] = Item.model_validate(item.model_dump())
    return store[item_id]


@app.patch("/items/{item_id}")
async def update_item(item_id: Known, item: Item) -> Item:
    store[item_id] = store[item_id].model_copy(update=item.model_dump(exclude_unset=True))
    return store[item_id]
