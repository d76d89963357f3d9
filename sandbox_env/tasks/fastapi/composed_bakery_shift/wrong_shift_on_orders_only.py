from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Body, Depends, FastAPI, File, Form, Header, HTTPException, UploadFile
from pydantic import BaseModel, Field

OVEN_LOG: list[str] = []
ORDERS: list[dict] = []


async def shift_header(x_shift: Annotated[str | None, Header()] = None):
    if x_shift not in (None, "early", "late"):
        raise HTTPException(status_code=400, detail="unknown shift")


class Dough(BaseModel):
    flour_g: int = Field(gt=0)
    water_g: int = Field(gt=0)


async def bake(order: dict) -> None:
    OVEN_LOG.append(f"order {order['id']}: {order['loaves']} loaves for {order['customer']}")


orders = APIRouter(prefix="/orders", dependencies=[Depends(shift_header)])
recipes = APIRouter(prefix="/recipes")


@orders.post("/", status_code=201)
async def place_order(
    background: BackgroundTasks,
    customer: Annotated[str, Form(min_length=2)],
    loaves: Annotated[int, Form(ge=1, le=12)],
    rush: Annotated[bool, Form()] = False,
):
    order = {"id": len(ORDERS) + 1, "customer": customer, "loaves": loaves, "rush": rush}
    ORDERS.append(order)
    background.add_task(bake, order)
    return order


@orders.get("/oven-log")
async def oven_log():
    return {"log": OVEN_LOG}


@recipes.post("/{name}/card")
async def upload_card(name: str, card: Annotated[UploadFile, File()]):
    data = await card.read()
    return {"name": name, "filename": card.filename, "size": len(data), "lines": len(data.decode().splitlines())}


@recipes.put("/{name}")
async def set_dough(name: str, recipe: Annotated[Dough, Body(embed=True)]):
    return {"name": name, "hydration": round(recipe.water_g * 100 / recipe.flour_g)}


app = FastAPI()
app.include_router(orders)
app.include_router(recipes)
