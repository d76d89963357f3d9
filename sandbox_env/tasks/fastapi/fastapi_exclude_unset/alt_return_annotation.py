# return annotations instead of response_model=, model instances (validated from the store) returned
from fastapi import FastAPI
from pydantic import BaseModel, Field


class Item(BaseModel):
    name: str
    description: str | None = None
    price: float
    tax: float = 10.5
    tags: list[str] = Field(default_factory=list)


items = {
    "foo": {"name": "Foo", "price": 50.2},
    "bar": {"name": "Bar", "description": "The bartenders", "price": 62, "tax": 20.2},
    "baz": {"name": "Baz", "description": None, "price": 50.2, "tax": 10.5, "tags": []},
}

app = FastAPI()


@app.get("/items/{item_id}", response_model_exclude_unset=True)
async def read_item(item_id: str) -> Item:
    return Item(**items[item_id])


@app.get("/items/{item_id}/full")
async def read_item_full(item_id: str) -> Item:
    return Item.model_validate(items[item_id])
