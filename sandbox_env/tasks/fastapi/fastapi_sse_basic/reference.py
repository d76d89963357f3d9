from collections.abc import AsyncIterable

from fastapi import FastAPI
from fastapi.sse import EventSourceResponse
from pydantic import BaseModel

app = FastAPI()


class Item(BaseModel):
    name: str
    price: float


class Words(BaseModel):
    words: list[str]


ITEMS = [
    Item(name="Plumbus", price=32.99),
    Item(name="Portal Gun", price=999.99),
    Item(name="Meeseeks Box", price=49.99),
]


@app.get("/items/stream", response_class=EventSourceResponse)
async def stream_items() -> AsyncIterable[Item]:
    for item in ITEMS:
        yield item


@app.post("/echo/stream", response_class=EventSourceResponse)
async def echo_stream(body: Words) -> AsyncIterable[dict]:
    for i, word in enumerate(body.words):
        yield {"index": i, "word": word, "length": len(word)}
