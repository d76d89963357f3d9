from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI()


class Item(BaseModel):
    name: str
    description: str | None = None
    price: float
    tax: float | None = None


@app.post("/items/")
def create_item(item: Item):
    data = item.model_dump()
    if item.tax:
        data["price_with_tax"] = item.price + item.tax
    return data
