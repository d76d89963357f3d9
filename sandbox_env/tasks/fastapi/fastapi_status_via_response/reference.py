from fastapi import FastAPI, Response
from pydantic import BaseModel

app = FastAPI()

TASKS: dict[str, str] = {}


class TaskIn(BaseModel):
    title: str


@app.put("/tasks/{task_id}")
def upsert_task(task_id: str, task: TaskIn, response: Response):
    created = task_id not in TASKS
    TASKS[task_id] = task.title
    if created:
        response.status_code = 201
    response.headers["X-Total-Tasks"] = str(len(TASKS))
    return {"task_id": task_id, "title": task.title, "created": created}


@app.get("/tasks")
def list_tasks():
    return {"tasks": TASKS}
