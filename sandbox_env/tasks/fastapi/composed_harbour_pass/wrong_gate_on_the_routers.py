from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Request, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel, Field

SAILINGS = ["Kestrel", "Marram", "Tern", "Osprey"]
HARBOUR_PASS = "gull-7"
OPEN_PATHS = ("/status", "/openapi.json")
FLEET: dict[str, dict] = {}


class Ferry(BaseModel):
    ferry_name: str = Field(alias="ferryName", min_length=2)
    seat_count: int = Field(alias="seatCount", ge=1)


async def harbour_gate(x_harbour_pass: Annotated[str | None, Header()] = None):
    if x_harbour_pass != HARBOUR_PASS:
        raise HTTPException(status_code=403, detail="no harbour pass")


departures = APIRouter(prefix="/departures", dependencies=[Depends(harbour_gate)])
ferries = APIRouter(prefix="/ferries", dependencies=[Depends(harbour_gate)])


@departures.get("/stream", response_class=EventSourceResponse)
async def stream(last_event_id: Annotated[int | None, Header()] = None):
    start = 0 if last_event_id is None else last_event_id + 1
    for slot in range(start, len(SAILINGS)):
        yield ServerSentEvent(data={"ferry": SAILINGS[slot], "slot": slot}, event="departure", id=str(slot))
    yield ServerSentEvent(raw_data="harbour closed", event="closed")


@ferries.put("/{code}", response_model=Ferry)
async def register(code: str, ferry: Ferry, response: Response):
    if code not in FLEET:
        response.status_code = 201
    FLEET[code] = {**ferry.model_dump(by_alias=True), "berth": code}
    response.headers["X-Fleet-Size"] = str(len(FLEET))
    return FLEET[code]


@ferries.get("/{code}", response_model=Ferry)
async def read_ferry(code: str):
    if code not in FLEET:
        raise HTTPException(status_code=404, detail="no such ferry")
    return FLEET[code]


@ferries.get("/{code}/log", response_model=Ferry, response_model_by_alias=False)
async def ferry_log(code: str):
    if code not in FLEET:
        raise HTTPException(status_code=404, detail="no such ferry")
    return FLEET[code]


app = FastAPI()


@app.get("/status")
async def status():
    return {"harbour": "open"}


app.include_router(departures)
app.include_router(ferries)
