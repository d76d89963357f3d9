from fastapi import Depends, FastAPI, Header, HTTPException, Path, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

SHELVES = {
    "maps": ["Harbour Charts", "Old Roads", "Salt Marsh Survey", "The Long Coast", "Upland Paths"],
    "poetry": ["Lamp Songs", "Nine Winters"],
}
MEMBERS = {1: "Odile Marsh", 2: "Tobiah Kerr"}


class NewVolume(BaseModel):
    title: str = Field(min_length=1)
    pages: int = Field(ge=1)
    note: str | None = None


app = FastAPI()
volumes: list[dict] = []


def invalid_request(request, exc):
    where = []
    for error in exc.errors():
        where.append(".".join(map(str, error["loc"])))
    return JSONResponse({"problem": "invalid request", "where": where}, status_code=422)


app.add_exception_handler(RequestValidationError, invalid_request)


def desk_key(x_desk_key: str = Header()):
    if x_desk_key == "lantern-42":
        return
    raise HTTPException(401, "desk key refused")


@app.get("/catalogue/volumes")
def volumes_on_shelf(shelf: str = Query(min_length=2), limit: int = Query(3, ge=1, le=10)):
    titles = SHELVES.get(shelf)
    if titles is None:
        raise HTTPException(404, "no such shelf")
    return {"shelf": shelf, "titles": titles[:limit]}


@app.post("/catalogue/volumes", status_code=201)
def new_volume(volume: NewVolume):
    volumes.append(volume)
    return {"id": len(volumes), "title": volume.title, "pages": volume.pages, "note": volume.note}


@app.get("/members/", dependencies=[Depends(desk_key)])
def all_members():
    return [{"member_id": number, "name": MEMBERS[number]} for number in sorted(MEMBERS)]


@app.get("/members/{member_id}", dependencies=[Depends(desk_key)])
def one_member(member_id: int = Path(ge=1)):
    try:
        return {"member_id": member_id, "name": MEMBERS[member_id]}
    except KeyError:
        raise HTTPException(404, "no such member") from None
