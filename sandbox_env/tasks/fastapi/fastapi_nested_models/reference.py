from fastapi import FastAPI
from pydantic import BaseModel, HttpUrl

app = FastAPI()


class Image(BaseModel):
    url: HttpUrl
    name: str


class Item(BaseModel):
    name: str
    price: float
    tags: set[str] = set()
    images: list[Image] | None = None


class Offer(BaseModel):
    name: str
    items: list[Item]


@app.post("/items/")
def create_item(item: Item) -> Item:
    return item


@app.post("/offers/")
def create_offer(offer: Offer):
    tags = sorted({t for item in offer.items for t in item.tags})
    return {"name": offer.name, "item_count": len(offer.items), "total": sum(i.price for i in offer.items), "tags": tags}
