# default-value Header() parameters instead of Annotated
from fastapi import FastAPI, Header

app = FastAPI()


@app.get("/headers/")
async def read_headers(
    user_agent: str | None = Header(default=None),
    strange_header: str | None = Header(default=None, convert_underscores=False),
    x_token: list[str] = Header(default=[]),
):
    return {"user_agent": user_agent, "strange_header": strange_header, "x_token": x_token}
