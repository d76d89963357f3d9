# default-value Body() instead of Annotated, the answer dumped explicitly
from fastapi import Body, FastAPI, Query
from pydantic import BaseModel


class Item(BaseModel):
    name: str
    price: float


class User(BaseModel):
    username: str
    full_name: str | None = None


app = FastAPI()


@app.put("/items/{item_id}")
async def update_item(
    item_id: int,
    item: Item,
    user: User,
    importance: int = Body(gt=0),
    q: str | None = Query(default=None),
):
    answer = {"item_id": item_id, "item": item.model_dump(), "user": user.model_dump(), "importance": importance}
    if q:
        answer["q"] = q
    return answer
