from typing import Literal

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

Priority = Literal["low", "normal", "urgent"]


class Refusal(Exception):
    def __init__(self, code: str, status: int):
        super().__init__(code)
        self.code, self.status = code, status


class DeskApp(FastAPI):
    builds = 0

    def openapi(self):
        if self.openapi_schema is None:
            DeskApp.builds += 1
            document = super().openapi()
            for path_item in document["paths"].values():
                for operation in path_item.values():
                    operation["x-desk-team"] = operation["tags"][0]
        return self.openapi_schema


app = DeskApp(title="Ticket Desk", version="4.2.0")
app.add_exception_handler(Refusal, lambda request, exc: JSONResponse({"error": exc.code, "status": exc.status}, exc.status))
tickets: list[dict] = []


class Opening(BaseModel):
    subject: str = Field(min_length=3)
    priority: Priority = "normal"
    assignee: str | None = None


class Change(BaseModel):
    subject: str = Field(None, min_length=3)
    priority: Priority = Field(None)
    assignee: str | None = None


def find(ticket_id: int) -> dict:
    if 1 <= ticket_id <= len(tickets):
        return tickets[ticket_id - 1]
    raise Refusal("ticket_not_found", 404)


def check_agent(agent: str) -> None:
    if agent not in {"mika", "sol"}:
        raise Refusal("agent_not_found", 404)


@app.get("/meta/builds", include_in_schema=False)
def builds():
    return {"builds": DeskApp.builds}


@app.post("/tickets/", status_code=201, tags=["triage"])
def open_ticket(opening: Opening):
    ticket = {"id": len(tickets) + 1, "subject": opening.subject, "priority": opening.priority}
    ticket.update(assignee=opening.assignee, state="open")
    tickets.append(ticket)
    return ticket


@app.get("/tickets/{ticket_id}", tags=["triage"])
def get_ticket(ticket_id: int):
    return find(ticket_id)


@app.patch("/tickets/{ticket_id}", tags=["triage"])
def patch_ticket(ticket_id: int, change: Change):
    ticket = find(ticket_id)
    if ticket["state"] == "closed":
        raise Refusal("ticket_closed", 409)
    for field in change.model_fields_set:
        ticket[field] = getattr(change, field)
    return ticket


@app.get("/agents/{agent}/queue", tags=["agents"])
def agent_queue(agent: str):
    check_agent(agent)
    return [t for t in tickets if (t["assignee"], t["state"]) == (agent, "open")]


@app.post("/agents/{agent}/close/{ticket_id}", tags=["agents"])
def close_ticket(agent: str, ticket_id: int):
    check_agent(agent)
    ticket = find(ticket_id)
    if ticket["assignee"] != agent:
        raise Refusal("not_assignee", 403)
    ticket["state"] = "closed"
    return ticket
