# response_model= instead of a return annotation, an Offer answer model, set() via default_factory
from fastapi import FastAPI
from pydantic import BaseModel, Field, HttpUrl


class Image(BaseModel):
    url: HttpUrl
    name: str


class Item(BaseModel):
    name: str
    price: float
    tags: set[str] = Field(default_factory=set)
    images: list[Image] | None = None


class Offer(BaseModel):
    name: str
    items: list[Item]


class OfferSummary(BaseModel):
    name: str
    item_count: int
    total: float
    tags: list[str]


app = FastAPI()


@app.post("/items/", response_model=Item)
async def create_item(item: Item):
    return item


@app.post("/offers/", response_model=OfferSummary)
async def create_offer(offer: Offer):
    tags: set[str] = set()
    for item in offer.items:
        tags |= item.tags
    return OfferSummary(
        name=offer.name, item_count=len(offer.items), total=sum(i.price for i in offer.items), tags=sorted(tags)
    )
