from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

ROSTER = [("vale", "Dr Ines Vale"), ("okafor", "Dr Remi Okafor"), ("lindqvist", "Dr Sanna Lindqvist")]


class WingHeaders:
    """A plain ASGI middleware: headers added to every http.response.start."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.inner(scope, receive, send)
        ref = [value for name, value in scope["headers"] if name == b"x-visit-ref"]

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                extra = [(b"x-clinic-wing", b"north"), *((b"x-visit-ref", value) for value in ref[:1])]
                message = {**message, "headers": list(message.get("headers", [])) + extra}
            await send(message)

        await self.inner(scope, receive, send_with_headers)


class Book:
    def __init__(self):
        self.entries = {}
        self.issued = 0

    def count(self, code):
        return len([e for e in self.entries.values() if e["clinician"] == code])


class Request(BaseModel):
    clinician: str
    patient: str = Field(min_length=2)
    minutes: int = Field(20, ge=10, le=60)


app = FastAPI()
app.add_middleware(WingHeaders)
book = Book()
names = dict(ROSTER)


@app.on_event("startup")
def open_book():
    book.entries.clear()
    book.issued = 0


@app.get("/clinicians/on-call")
def who_is_on_call():
    return {"code": "okafor", "name": names["okafor"]}


@app.get("/clinicians/")
def roster():
    return [{"code": c, "name": n, "booked": book.count(c)} for c, n in ROSTER]


@app.get("/clinicians/{code}")
def clinician(code: str):
    if code in names:
        return {"code": code, "name": names[code], "booked": book.count(code)}
    raise HTTPException(404, "unknown clinician")


@app.post("/appointments/", status_code=201)
def new_appointment(req: Request):
    if req.clinician not in names:
        raise HTTPException(404, "unknown clinician")
    book.issued += 1
    entry = {"id": book.issued, "clinician": req.clinician, "patient": req.patient, "minutes": req.minutes}
    book.entries[book.issued] = entry
    return entry


@app.delete("/appointments/{booking_id}", status_code=204)
def drop_appointment(booking_id: int):
    if book.entries.pop(booking_id, None) is None:
        raise HTTPException(404, "no such appointment")
