# two APIRouters with prefixes, Annotated Path() parameters
from typing import Annotated

from fastapi import APIRouter, FastAPI, Path

users = APIRouter(prefix="/users")
files = APIRouter(prefix="/files")


@users.get("/me")
async def me():
    return {"user_id": "me", "name": "Current User"}


@users.get("/{user_id}")
async def user(user_id: Annotated[int, Path()]):
    return {"user_id": user_id}


@files.get("/{file_path:path}")
async def file(file_path: Annotated[str, Path()]):
    return {"file_path": file_path}


app = FastAPI()
app.include_router(users)
app.include_router(files)
