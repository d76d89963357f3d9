# a hand-built JSONResponse instead of returning the dumped model
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel

app = FastAPI()


class Item(BaseModel):
    name: str
    description: str | None = None
    price: float
    tax: float | None = None


@app.post("/items/")
async def create_item(item: Item) -> JSONResponse:
    body = {"name": item.name, "description": item.description, "price": item.price, "tax": item.tax}
    if item.tax is not None:
        body.update(price_with_tax=item.price + item.tax)
    return JSONResponse(body)
