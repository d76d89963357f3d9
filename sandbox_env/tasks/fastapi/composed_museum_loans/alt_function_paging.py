from fastapi import Depends, FastAPI, HTTPException, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field


def paging(offset: int = Query(0, ge=0), limit: int = Query(2, ge=1, le=5)) -> tuple[int, int]:
    return offset, limit


def page_of(rows: list, window: tuple[int, int]) -> dict:
    offset, limit = window
    return {"offset": offset, "limit": limit, "total": len(rows), "results": rows[offset:][:limit]}


async def rejected(request, exc: RequestValidationError):
    where = [".".join(map(str, e["loc"])) for e in exc.errors()]
    return JSONResponse(status_code=400, content={"rejected": where, "count": len(where)})


app = FastAPI(exception_handlers={RequestValidationError: rejected})
exhibit_rows: list[dict] = []
loan_rows: list[dict] = []


class Artist(BaseModel):
    name: str
    born: int = Field(ge=1000, le=2030)


class Size(BaseModel):
    width_cm: float = Field(gt=0)
    height_cm: float = Field(gt=0)


class ExhibitIn(BaseModel):
    title: str
    artist: Artist
    size: Size
    tags: list[str] = []


class Borrower(BaseModel):
    museum: str
    city: str


class LoanIn(BaseModel):
    borrower: Borrower
    weeks: int = Field(ge=1, le=52)


@app.post("/exhibits/", status_code=201)
def add(exhibit: ExhibitIn):
    row = {"id": len(exhibit_rows) + 1}
    row.update(exhibit.model_dump())
    row["tags"] = sorted(set(exhibit.tags))
    exhibit_rows.append(row)
    return row


@app.get("/exhibits/")
def exhibits(window: tuple[int, int] = Depends(paging)):
    return page_of(exhibit_rows, window)


@app.post("/loans/{exhibit_id}", status_code=201)
def lend(exhibit_id: int, loan: LoanIn):
    if exhibit_id not in [row["id"] for row in exhibit_rows]:
        raise HTTPException(404, "no such exhibit")
    row = {"loan": len(loan_rows) + 1, "exhibit_id": exhibit_id, "borrower": loan.borrower.model_dump()}
    row.update(weeks=loan.weeks, days=7 * loan.weeks)
    loan_rows.append(row)
    return row


@app.get("/loans/")
def loans(window: tuple[int, int] = Depends(paging)):
    return page_of(loan_rows, window)
