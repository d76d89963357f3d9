from typing import Annotated

from fastapi import APIRouter, Body, Depends, FastAPI, HTTPException, Query
from pydantic import BaseModel, Field

EXHIBITS: list[dict] = []
LOANS: list[dict] = []


class Page:
    def __init__(self, offset: Annotated[int, Query(ge=0)] = 0, limit: Annotated[int, Query(ge=1, le=5)] = 2):
        self.offset = offset
        self.limit = limit

    def of(self, rows: list[dict]) -> dict:
        window = rows[self.offset : self.offset + self.limit]
        return {"offset": self.offset, "limit": self.limit, "total": len(rows), "results": window}


class Artist(BaseModel):
    name: str
    born: int = Field(ge=1000, le=2030)


class Size(BaseModel):
    width_cm: float = Field(gt=0)
    height_cm: float = Field(gt=0)


class Exhibit(BaseModel):
    title: str
    artist: Artist
    size: Size
    tags: set[str] = set()


class Borrower(BaseModel):
    museum: str
    city: str


exhibits = APIRouter(prefix="/exhibits")
loans = APIRouter(prefix="/loans")


@exhibits.post("/", status_code=201)
async def add_exhibit(exhibit: Exhibit):
    record = {"id": len(EXHIBITS) + 1, **exhibit.model_dump(), "tags": sorted(exhibit.tags)}
    EXHIBITS.append(record)
    return record


@exhibits.get("/")
async def list_exhibits(page: Annotated[Page, Depends()]):
    return page.of(EXHIBITS)


@loans.post("/{exhibit_id}", status_code=201)
async def lend(exhibit_id: int, borrower: Borrower, weeks: Annotated[int, Body(ge=1, le=52)]):
    if not any(e["id"] == exhibit_id for e in EXHIBITS):
        raise HTTPException(status_code=404, detail="no such exhibit")
    record = {"loan": len(LOANS) + 1, "exhibit_id": exhibit_id, "borrower": borrower.model_dump(), "weeks": weeks, "days": weeks * 7}
    LOANS.append(record)
    return record


@loans.get("/")
async def list_loans(page: Annotated[Page, Depends()]):
    return page.of(LOANS)


app = FastAPI()


app.include_router(exhibits)
app.include_router(loans)
