import json

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

SAILINGS = ("Kestrel", "Marram", "Tern", "Osprey")


class Gate:
    """A plain ASGI middleware: no pass, no entry (the status page and the schema excepted)."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"] not in ("/status", "/openapi.json"):
            if (b"x-harbour-pass", b"gull-7") not in scope["headers"]:
                refusal = JSONResponse({"detail": "no harbour pass"}, status_code=403)
                return await refusal(scope, receive, send)
        await self.inner(scope, receive, send)


class Entry(BaseModel):
    name: str = Field(validation_alias="ferryName", min_length=2)
    seats: int = Field(validation_alias="seatCount", ge=1)


app = FastAPI()
app.add_middleware(Gate)
register: dict[str, Entry] = {}


@app.get("/status")
def harbour_status():
    return {"harbour": "open"}


def board(start: int):
    for slot in range(start, len(SAILINGS)):
        payload = json.dumps({"ferry": SAILINGS[slot], "slot": slot})
        yield f"event: departure\nid: {slot}\ndata: {payload}\n\n"
    yield "event: closed\ndata: harbour closed\n\n"


@app.get("/departures/stream")
def departures(request: Request):
    seen = request.headers.get("last-event-id")
    start = int(seen) + 1 if seen is not None else 0
    return StreamingResponse(board(start), media_type="text/event-stream")


@app.put("/ferries/{code}")
def put_ferry(code: str, entry: Entry):
    status = 200 if code in register else 201
    register[code] = entry
    body = {"ferryName": entry.name, "seatCount": entry.seats}
    return JSONResponse(body, status_code=status, headers={"X-Fleet-Size": str(len(register))})


def lookup(code: str) -> Entry:
    if code not in register:
        raise HTTPException(404, "no such ferry")
    return register[code]


@app.get("/ferries/{code}")
def get_ferry(code: str):
    entry = lookup(code)
    return {"ferryName": entry.name, "seatCount": entry.seats}


@app.get("/ferries/{code}/log")
def ferry_log(code: str):
    entry = lookup(code)
    return {"ferry_name": entry.name, "seat_count": entry.seats}
