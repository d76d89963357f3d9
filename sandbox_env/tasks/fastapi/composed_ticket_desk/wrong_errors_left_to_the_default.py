from typing import Literal

from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, Field

AGENTS = ("mika", "sol")
BUILDS = {"count": 0}
TICKETS: dict[int, dict] = {}


class DeskError(HTTPException):
    def __init__(self, status_code: int, code: str):
        super().__init__(status_code=status_code, detail=code)


class NewTicket(BaseModel):
    subject: str = Field(min_length=3)
    priority: Literal["low", "normal", "urgent"] = "normal"
    assignee: str | None = None


class TicketChange(BaseModel):
    subject: str = Field(default=None, min_length=3)
    priority: Literal["low", "normal", "urgent"] = Field(default=None)
    assignee: str | None = None


class Ticket(BaseModel):
    id: int
    subject: str
    priority: str
    assignee: str | None
    state: str


def _ticket(ticket_id: int) -> dict:
    if ticket_id not in TICKETS:
        raise DeskError(status_code=404, code="ticket_not_found")
    return TICKETS[ticket_id]


tickets = APIRouter(prefix="/tickets", tags=["triage"])
agents = APIRouter(prefix="/agents", tags=["agents"])


@tickets.post("/", status_code=201, response_model=Ticket)
async def open_ticket(body: NewTicket):
    record = {"id": len(TICKETS) + 1, **body.model_dump(), "state": "open", "triage_score": 7}
    TICKETS[record["id"]] = record
    return record


@tickets.get("/{ticket_id}", response_model=Ticket)
async def read_ticket(ticket_id: int):
    return _ticket(ticket_id)


@tickets.patch("/{ticket_id}", response_model=Ticket)
async def change_ticket(ticket_id: int, body: TicketChange):
    record = _ticket(ticket_id)
    if record["state"] == "closed":
        raise DeskError(status_code=409, code="ticket_closed")
    record.update(body.model_dump(exclude_unset=True))
    return record


def _agent(agent: str) -> str:
    if agent not in AGENTS:
        raise DeskError(status_code=404, code="agent_not_found")
    return agent


@agents.get("/{agent}/queue", response_model=list[Ticket])
async def queue(agent: str):
    _agent(agent)
    return [t for t in TICKETS.values() if t["assignee"] == agent and t["state"] == "open"]


@agents.post("/{agent}/close/{ticket_id}", response_model=Ticket)
async def close(agent: str, ticket_id: int):
    _agent(agent)
    record = _ticket(ticket_id)
    if record["assignee"] != agent:
        raise DeskError(status_code=403, code="not_assignee")
    record["state"] = "closed"
    return record


app = FastAPI()


@app.get("/meta/builds", include_in_schema=False)
async def builds():
    return {"builds": BUILDS["count"]}


app.include_router(tickets)
app.include_router(agents)


def desk_openapi():
    if app.openapi_schema:
        return app.openapi_schema
    BUILDS["count"] += 1
    schema = get_openapi(title="Ticket Desk", version="4.2.0", routes=app.routes)
    for operations in schema["paths"].values():
        for operation in operations.values():
            operation["x-desk-team"] = operation["tags"][0]
    app.openapi_schema = schema
    return app.openapi_schema


app.openapi = desk_openapi
