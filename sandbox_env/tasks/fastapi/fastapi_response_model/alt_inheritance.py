# UserIn inherits UserOut; a stored model with the hash, returned as a model instance
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel


class UserOut(BaseModel):
    username: str
    email: str
    full_name: str | None = None


class UserIn(UserOut):
    password: str


class UserInDB(UserOut):
    hashed_password: str


USERS: dict[str, UserInDB] = {}

app = FastAPI()


@app.post("/users/", response_model=UserOut, status_code=201)
async def create_user(user: UserIn):
    stored = UserInDB(**user.model_dump(exclude={"password"}), hashed_password=f"hashed-{user.password}")
    USERS[stored.username] = stored
    return stored


@app.get("/users/{username}", response_model=UserOut)
async def read_user(username: str):
    stored = USERS.get(username)
    if stored is None:
        raise HTTPException(404, detail="User not found")
    return stored
