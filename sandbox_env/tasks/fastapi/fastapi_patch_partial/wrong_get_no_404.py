from fastapi import FastAPI, HTTPException
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel

app = FastAPI()


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


def _stored(item_id: str) -> dict:
    if item_id not in items:
        raise HTTPException(status_code=404, detail="Item not found")
    return items[item_id]


@app.get("/items/{item_id}", response_model=Item)
def read_item(item_id: str):
    return items[item_id]


@app.put("/items/{item_id}", response_model=Item)
def replace_item(item_id: str, item: Item):
    _stored(item_id)
    items[item_id] = jsonable_encoder(item)
    return items[item_id]


@app.patch("/items/{item_id}", response_model=Item)
def update_item(item_id: str, item: Item):
    stored = Item(**_stored(item_id))
    updated = stored.model_copy(update=item.model_dump(exclude_unset=True))
    items[item_id] = jsonable_encoder(updated)
    return updated
