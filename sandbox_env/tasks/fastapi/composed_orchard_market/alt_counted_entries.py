import itertools

from fastapi import FastAPI, HTTPException, Path, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.routing import Mount

market = FastAPI(title="Orchard Market")
price_list = {"Bramley": 14.5, "Cox": 18.0, "Egremont": 21.25}


@market.get("/prices")
def market_price(variety: str = Query(min_length=3)):
    if variety in price_list:
        return {"variety": variety, "price_per_crate": price_list[variety]}
    raise HTTPException(404, "no price")


def orchard_invalid(request, exc):
    return JSONResponse({"invalid": [".".join(str(p) for p in err["loc"]) for err in exc.errors()]}, 422)


app = FastAPI(title="Orchard")
app.add_exception_handler(RequestValidationError, orchard_invalid)
app.router.routes.append(Mount("/market", app=market))
numbers = itertools.count(1)
log: dict[int, tuple[int, int]] = {}


class Logged(BaseModel):
    row: int = Field(ge=1, le=9)
    crates: int = Field(ge=1)


@app.get("/trees/{row}/{tree}")
def tree(row: int = Path(ge=1, le=9), tree: int = Path(ge=1, le=40)):
    return {"row": row, "tree": tree, "variety": ("Cox", "Bramley")[row % 2]}


@app.post("/harvest/", status_code=201)
def add(entry: Logged):
    number = next(numbers)
    log[number] = (entry.row, entry.crates)
    return {"entry": number, "row": entry.row, "crates": entry.crates}


@app.get("/harvest/")
def total(row: list[int] | None = Query(None)):
    wanted = set(row or [])
    crates = sum(c for r, c in log.values() if not wanted or r in wanted)
    return {"rows": sorted(wanted), "crates": crates}


@app.delete("/harvest/{entry}", status_code=204)
def remove(entry: int):
    if log.pop(entry, None) is None:
        raise HTTPException(404, "no such entry")
