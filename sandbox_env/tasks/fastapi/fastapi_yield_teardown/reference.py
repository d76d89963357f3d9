from typing import Annotated

from fastapi import Depends, FastAPI, HTTPException

app = FastAPI()
LOG: list[str] = []


def get_db():
    LOG.append("db open")
    try:
        yield "db"
    except HTTPException as exc:
        LOG.append(f"db rollback {exc.status_code}")
        raise
    finally:
        LOG.append("db close")


def get_user(db: Annotated[str, Depends(get_db)]):
    LOG.append("user open")
    try:
        yield "user"
    finally:
        LOG.append("user close")


@app.get("/run")
def run(user: Annotated[str, Depends(get_user)]):
    LOG.append("endpoint")
    return {"ok": True, "log_at_endpoint": list(LOG)}


@app.get("/fail")
def fail(user: Annotated[str, Depends(get_user)]):
    LOG.append("endpoint")
    raise HTTPException(status_code=409, detail="conflict")


@app.get("/log")
def read_log():
    return LOG
