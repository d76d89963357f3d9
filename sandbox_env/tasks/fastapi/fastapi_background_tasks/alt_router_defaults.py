# an APIRouter, default-value parameters instead of Annotated, the dependency's task added by name
from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI

LOG: list[str] = []


def write_log(message: str):
    LOG.append(message)


def get_query(background_tasks: BackgroundTasks, q: str | None = None):
    if q is not None and q != "":
        background_tasks.add_task(write_log, message="found query: " + q)
    return q


router = APIRouter()


@router.post("/send-notification/{email}")
def send_notification(email: str, background_tasks: BackgroundTasks, q: str | None = Depends(get_query)):
    background_tasks.add_task(write_log, message="message to " + email)
    return {"message": "Notification sent in the background", "log_size": len(LOG)}


@router.get("/log")
def read_log():
    return {"log": LOG}


app = FastAPI()
app.include_router(router)
