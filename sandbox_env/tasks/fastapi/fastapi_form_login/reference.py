from typing import Annotated

from fastapi import FastAPI, Form
from pydantic import BaseModel

app = FastAPI()


class SignupForm(BaseModel):
    username: str
    password: str
    newsletter: bool = False
    model_config = {"extra": "forbid"}


@app.post("/login/")
async def login(username: Annotated[str, Form()], password: Annotated[str, Form()]):
    return {"username": username}


@app.post("/signup/")
async def signup(data: Annotated[SignupForm, Form()]):
    return {"username": data.username, "newsletter": data.newsletter}
