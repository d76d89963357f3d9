# Body(embed=True) as a default value instead of Annotated, the item answered as a dict
from fastapi import Body, FastAPI
from pydantic import BaseModel


class Item(BaseModel):
    name: str
    price: float


app = FastAPI()


@app.put("/items/{item_id}")
async def update_item(item_id: int, item: Item = Body(..., embed=True)):
    return {"item_id": item_id, "item": item.model_dump()}


@app.post("/notes")
async def add_note(note: str = Body(..., embed=True)):
    return {"note": note, "length": len(note)}
