from fastapi import FastAPI
from pydantic import BaseModel

tags_metadata = [
    {"name": "users", "description": "Operations with users."},
    {
        "name": "items",
        "description": "Manage items.",
        "externalDocs": {"description": "Items docs", "url": "https://example.com/items"},
    },
]

app = FastAPI(
    title="Inventory API",
    version="3.1.4",
    description="Tracks *items* and their owners.",
    openapi_tags=tags_metadata,
)


class ItemIn(BaseModel):
    name: str


@app.get(
    "/items/",
    tags=["items"],
    summary="List items",
    description="Every item in stock.",
    response_description="The items",
)
async def list_items():
    return [{"name": "Hammer"}]


@app.post("/items/", tags=["items"], status_code=201, operation_id="create_item")
async def create_item(item: ItemIn):
    return item


@app.get("/users/", tags=["users"], deprecated=True)
async def list_users():
    return [{"username": "ann"}]


@app.get("/internal/", include_in_schema=False)
async def internal():
    return {"internal": True}
