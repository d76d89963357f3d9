from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Path, Query
from pydantic import BaseModel, Field

SHELVES = {
    "maps": ["Harbour Charts", "Old Roads", "Salt Marsh Survey", "The Long Coast", "Upland Paths"],
    "poetry": ["Lamp Songs", "Nine Winters"],
}
MEMBERS = {1: "Odile Marsh", 2: "Tobiah Kerr"}
DESK_KEY = "lantern-42"


class NewVolume(BaseModel):
    title: str = Field(min_length=1)
    pages: int = Field(ge=1)
    note: str | None = None


async def require_desk_key(x_desk_key: Annotated[str, Header()]):
    if x_desk_key != DESK_KEY:
        raise HTTPException(status_code=401, detail="desk key refused")


catalogue = APIRouter(prefix="/catalogue")
members = APIRouter(prefix="/members", dependencies=[Depends(require_desk_key)])
ADDED: list[dict] = []


@catalogue.get("/volumes")
async def list_volumes(shelf: Annotated[str, Query(min_length=2)], limit: Annotated[int, Query(ge=1, le=10)] = 3):
    if shelf not in SHELVES:
        raise HTTPException(status_code=404, detail="no such shelf")
    return {"shelf": shelf, "titles": SHELVES[shelf][:limit]}


@catalogue.post("/volumes", status_code=201)
async def add_volume(volume: NewVolume):
    record = {"id": len(ADDED) + 1, **volume.model_dump()}
    ADDED.append(record)
    return record


@members.get("/")
async def list_members():
    return [{"member_id": k, "name": v} for k, v in MEMBERS.items()]


@members.get("/{member_id}")
async def read_member(member_id: Annotated[int, Path(ge=1)]):
    if member_id not in MEMBERS:
        raise HTTPException(status_code=404, detail="no such member")
    return {"member_id": member_id, "name": MEMBERS[member_id]}


app = FastAPI()


app.include_router(catalogue)
app.include_router(members)
