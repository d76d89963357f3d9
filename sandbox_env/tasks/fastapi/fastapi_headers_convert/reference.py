from typing import Annotated

from fastapi import FastAPI, Header

app = FastAPI()


@app.get("/headers/")
def read_headers(
    user_agent: Annotated[str | None, Header()] = None,
    strange_header: Annotated[str | None, Header(convert_underscores=False)] = None,
    x_token: Annotated[list[str], Header()] = [],
):
    return {"user_agent": user_agent, "strange_header": strange_header, "x_token": x_token}
