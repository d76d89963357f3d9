from typing import Annotated

from fastapi import Depends, FastAPI, Form, Header, HTTPException, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.background import BackgroundTask


def shift_ok(x_shift: Annotated[str | None, Header()] = None) -> None:
    if x_shift is None or x_shift in {"early", "late"}:
        return
    raise HTTPException(400, "unknown shift")


SHIFT = [Depends(shift_ok)]
app = FastAPI()
log: list[str] = []
placed = 0


class OrderForm(BaseModel):
    customer: str = Field(min_length=2)
    loaves: int = Field(ge=1, le=12)
    rush: bool = False


class Dough(BaseModel):
    flour_g: int = Field(gt=0)
    water_g: int = Field(gt=0)


class DoughBody(BaseModel):
    recipe: Dough


@app.post("/orders/", dependencies=SHIFT)
def place(order: Annotated[OrderForm, Form()]):
    global placed
    placed += 1
    answer = {"id": placed, **order.model_dump()}
    line = f"order {placed}: {order.loaves} loaves for {order.customer}"
    return JSONResponse(answer, status_code=201, background=BackgroundTask(log.append, line))


@app.get("/orders/oven-log", dependencies=SHIFT)
def oven():
    return {"log": list(log)}


@app.post("/recipes/{name}/card", dependencies=SHIFT)
async def card(name: str, card: UploadFile):
    text = (await card.read()).decode()
    return {"name": name, "filename": card.filename, "size": len(text.encode()), "lines": len(text.splitlines())}


@app.put("/recipes/{name}", dependencies=SHIFT)
def hydration(name: str, body: DoughBody):
    return {"name": name, "hydration": round(body.recipe.water_g / body.recipe.flour_g * 100)}
