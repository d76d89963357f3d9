from typing import Annotated

from fastapi import APIRouter, FastAPI, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

PRICES = {"Bramley": 14.5, "Cox": 18.0, "Egremont": 21.25}
ENTRIES: dict[int, dict] = {}
COUNTER = {"last": 0}


class Crates(BaseModel):
    row: int = Field(ge=1, le=9)
    crates: int = Field(ge=1)


trees = APIRouter(prefix="/trees")
harvest = APIRouter(prefix="/harvest")


@trees.get("/{row}/{tree}")
async def read_tree(row: Annotated[int, Path(ge=1, le=9)], tree: Annotated[int, Path(ge=1, le=40)]):
    return {"row": row, "tree": tree, "variety": "Bramley" if row % 2 else "Cox"}


@harvest.post("/", status_code=201)
async def log_crates(body: Crates):
    COUNTER["last"] += 1
    ENTRIES[COUNTER["last"]] = body.model_dump()
    return {"entry": COUNTER["last"], **body.model_dump()}


@harvest.get("/")
async def totals(row: Annotated[list[int], Query()] = []):
    chosen = [e for e in ENTRIES.values() if not row or e["row"] in row]
    return {"rows": sorted(set(row)), "crates": sum(e["crates"] for e in chosen)}


@harvest.delete("/{entry}", status_code=204)
async def drop_entry(entry: int):
    if entry not in ENTRIES:
        raise HTTPException(status_code=404, detail="no such entry")
    del ENTRIES[entry]


market = FastAPI(title="Orchard Market")


@market.get("/prices")
async def price(variety: Annotated[str, Query(min_length=3)]):
    if variety not in PRICES:
        raise HTTPException(status_code=404, detail="no price")
    return {"variety": variety, "price_per_crate": PRICES[variety]}


app = FastAPI(title="Orchard")


@app.exception_handler(RequestValidationError)
async def invalid(request: Request, exc: RequestValidationError):
    return JSONResponse(status_code=422, content={"invalid": [".".join(map(str, e["loc"])) for e in exc.errors()]})


app.include_router(trees)
app.include_router(harvest)
app.mount("/market", market)
