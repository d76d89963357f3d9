from typing import Annotated

from fastapi import BackgroundTasks, Depends, FastAPI

app = FastAPI()
LOG: list[str] = []


def write_log(message: str) -> None:
    LOG.append(message)


def get_query(background_tasks: BackgroundTasks, q: str | None = None):
    if q:
        background_tasks.add_task(write_log, f"found query: {q}")
    return q


@app.post("/send-notification/{email}")
async def send_notification(email: str, background_tasks: BackgroundTasks, q: Annotated[str | None, Depends(get_query)]):
    background_tasks.add_task(write_log, f"message to {email}")
    return {"message": "Notification sent in the background", "log_size": len(LOG)}


@app.get("/log")
async def read_log():
    return {"log": LOG}
