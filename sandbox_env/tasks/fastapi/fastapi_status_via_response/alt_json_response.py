# builds its own JSONResponse instead of setting the status on the injected Response
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel

app = FastAPI()

TASKS: dict[str, str] = {}


class TaskIn(BaseModel):
    title: str


@app.put("/tasks/{task_id}")
async def upsert_task(task_id: str, task: TaskIn) -> JSONResponse:
    created = task_id not in TASKS
    TASKS[task_id] = task.title
    body = {"task_id": task_id, "title": task.title, "created": created}
    return JSONResponse(body, status_code=201 if created else 200, headers={"X-Total-Tasks": str(len(TASKS))})


@app.get("/tasks")
async def list_tasks():
    return {"tasks": dict(TASKS)}
