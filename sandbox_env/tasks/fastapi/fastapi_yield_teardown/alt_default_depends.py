# default-value Depends(), the dependencies as async generators, the rollback logged through isinstance
from fastapi import Depends, FastAPI, HTTPException

app = FastAPI()
LOG: list[str] = []


async def get_db():
    LOG.append("db open")
    try:
        yield "db"
    except Exception as exc:
        if isinstance(exc, HTTPException):
            LOG.append("db rollback %d" % exc.status_code)
        raise
    finally:
        LOG.append("db close")


async def get_user(db: str = Depends(get_db)):
    LOG.append("user open")
    try:
        yield "user"
    finally:
        LOG.append("user close")


@app.get("/run")
async def run(user: str = Depends(get_user)):
    LOG.append("endpoint")
    return {"ok": True, "log_at_endpoint": LOG.copy()}


@app.get("/fail")
async def fail(user: str = Depends(get_user)):
    LOG.append("endpoint")
    raise HTTPException(409, "conflict")


@app.get("/log")
async def read_log():
    return LOG
