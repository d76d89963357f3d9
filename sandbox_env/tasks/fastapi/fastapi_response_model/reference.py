from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

app = FastAPI()


class UserIn(BaseModel):
    username: str
    password: str
    email: str
    full_name: str | None = None


class UserOut(BaseModel):
    username: str
    email: str
    full_name: str | None = None


USERS: dict[str, dict] = {}


@app.post("/users/", response_model=UserOut, status_code=201)
def create_user(user: UserIn):
    record = user.model_dump(exclude={"password"})
    record["hashed_password"] = "hashed-" + user.password
    USERS[user.username] = record
    return record


@app.get("/users/{username}", response_model=UserOut)
def read_user(username: str):
    if username not in USERS:
        raise HTTPException(status_code=404, detail="User not found")
    return USERS[username]
