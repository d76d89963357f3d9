# default-value Form() parameters, an APIRouter, a ConfigDict
from typing import Annotated

from fastapi import APIRouter, FastAPI, Form
from pydantic import BaseModel, ConfigDict


class SignupForm(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str
    password: str
    newsletter: bool = False


router = APIRouter()


@router.post("/login/")
def login(username: str = Form(), password: str = Form()):
    return {"username": username}


@router.post("/signup/")
def signup(form: Annotated[SignupForm, Form()]):
    return form.model_dump(include={"username", "newsletter"})


app = FastAPI()
app.include_router(router)
