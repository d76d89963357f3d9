# An APIRouter and a class-based dependency that gathers the query parameters
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI

ITEMS = [f"item-{i}" for i in range(25)]


class Page:
    def __init__(self, skip: int = 0, limit: int = 10, q: str | None = None, short: bool = False):
        self.skip, self.limit, self.q, self.short = skip, limit, q, short


router = APIRouter(prefix="/items")


@router.get("/")
def list_items(page: Annotated[Page, Depends()]):
    names = [n for n in ITEMS if page.q is None or page.q in n]
    chosen = names[page.skip : page.skip + page.limit]
    body = {"items": chosen, "count": len(chosen)}
    if not page.short:
        body["note"] = "Use short=true for a compact answer"
    return body


app = FastAPI()
app.include_router(router)
