from contextlib import asynccontextmanager
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response
from pydantic import BaseModel, Field

ROSTER = {"vale": "Dr Ines Vale", "okafor": "Dr Remi Okafor", "lindqvist": "Dr Sanna Lindqvist"}
ON_CALL = "okafor"


class Booking(BaseModel):
    clinician: str
    patient: str = Field(min_length=2)
    minutes: int = Field(default=20, ge=10, le=60)


@asynccontextmanager
async def lifespan(app: FastAPI):
    yield {"roster": dict(ROSTER), "bookings": {}, "next_id": [1]}


async def wing_headers(request: Request, response: Response):
    response.headers["X-Clinic-Wing"] = "north"
    if "x-visit-ref" in request.headers:
        response.headers["X-Visit-Ref"] = request.headers["x-visit-ref"]


clinicians = APIRouter(prefix="/clinicians", dependencies=[Depends(wing_headers)])
appointments = APIRouter(prefix="/appointments")


def _booked(state, code: str) -> int:
    return sum(1 for b in state.bookings.values() if b["clinician"] == code)


@clinicians.get("/")
async def list_clinicians(request: Request):
    state = request.state
    return [{"code": code, "name": name, "booked": _booked(state, code)} for code, name in state.roster.items()]


@clinicians.get("/on-call")
async def on_call(request: Request):
    return {"code": ON_CALL, "name": request.state.roster[ON_CALL]}


@clinicians.get("/{code}")
async def read_clinician(code: str, request: Request):
    state = request.state
    if code not in state.roster:
        raise HTTPException(status_code=404, detail="unknown clinician")
    return {"code": code, "name": state.roster[code], "booked": _booked(state, code)}


@appointments.post("/", status_code=201)
async def book(booking: Booking, request: Request):
    state = request.state
    if booking.clinician not in state.roster:
        raise HTTPException(status_code=404, detail="unknown clinician")
    number = state.next_id[0]
    state.next_id[0] = number + 1
    record = {"id": number, **booking.model_dump()}
    state.bookings[number] = record
    return record


@appointments.delete("/{booking_id}", status_code=204)
async def cancel(booking_id: int, request: Request):
    if booking_id not in request.state.bookings:
        raise HTTPException(status_code=404, detail="no such appointment")
    del request.state.bookings[booking_id]


app = FastAPI(lifespan=lifespan)


app.include_router(clinicians)
app.include_router(appointments)
