from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.security import OAuth2PasswordBearer, OAuth2PasswordRequestForm

MEMBERS = {"ada": {"password": "chisel9", "suspended": False}, "bram": {"password": "lathe4", "suspended": True}}
TOOLS = ["bandsaw", "drill", "plane"]
JOURNAL: list[str] = []
LENT: dict[str, str] = {}

bearer = OAuth2PasswordBearer(tokenUrl="/auth/token")


async def journal(request: Request):
    JOURNAL.append(f"begin {request.method} {request.url.path}")
    try:
        yield
    finally:
        JOURNAL.append(f"end {request.url.path}")


async def member(token: Annotated[str, Depends(bearer)]) -> str:
    name = token.removeprefix("tok-")
    if not token.startswith("tok-") or name not in MEMBERS:
        raise HTTPException(status_code=401, detail="unknown token", headers={"WWW-Authenticate": "Bearer"})
    if MEMBERS[name]["suspended"]:
        raise HTTPException(status_code=403, detail="suspended")
    return name


auth = APIRouter(prefix="/auth")
tools = APIRouter(prefix="/tools", dependencies=[Depends(journal), Depends(member)])


@auth.post("/token")
async def token(form: Annotated[OAuth2PasswordRequestForm, Depends()]):
    if form.username not in MEMBERS or MEMBERS[form.username]["password"] != form.password:
        raise HTTPException(status_code=400, detail="wrong name or password")
    return {"access_token": f"tok-{form.username}", "token_type": "bearer"}


@tools.get("/")
async def list_tools():
    return [{"name": name, "free": name not in LENT} for name in TOOLS]


@tools.post("/{name}/borrow")
async def borrow(name: str, who: Annotated[str, Depends(member)]):
    if name not in TOOLS:
        raise HTTPException(status_code=404, detail="no such tool")
    if name in LENT:
        raise HTTPException(status_code=409, detail="already out")
    LENT[name] = who
    return {"name": name, "borrower": who}


app = FastAPI()


@app.get("/journal")
async def read_journal():
    return JOURNAL


app.include_router(auth)
app.include_router(tools)
