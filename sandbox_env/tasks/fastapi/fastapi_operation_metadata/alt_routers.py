# the tags given by two APIRouters, the description from the docstring
from fastapi import APIRouter, FastAPI
from pydantic import BaseModel

tags_metadata = [
    {"name": "users", "description": "Operations with users."},
    {
        "name": "items",
        "description": "Manage items.",
        "externalDocs": {"description": "Items docs", "url": "https://example.com/items"},
    },
]


class ItemIn(BaseModel):
    name: str


items = APIRouter(prefix="/items", tags=["items"])
users = APIRouter(prefix="/users", tags=["users"])


@items.get("/", summary="List items", response_description="The items")
def list_items():
    """Every item in stock."""
    return [{"name": "Hammer"}]


@items.post("/", status_code=201, operation_id="create_item")
def create_item(item: ItemIn) -> ItemIn:
    return item


@users.get("/", deprecated=True)
def list_users():
    return [{"username": "ann"}]


app = FastAPI(title="Inventory API", version="3.1.4", description="Tracks *items* and their owners.", openapi_tags=tags_metadata)
app.include_router(items)
app.include_router(users)


@app.get("/internal/", include_in_schema=False)
def internal():
    return {"internal": True}
