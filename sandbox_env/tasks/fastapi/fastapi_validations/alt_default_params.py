# default-value Path()/Query() parameters instead of Annotated, the required query by Query(...)
from fastapi import FastAPI, Path, Query

app = FastAPI()


@app.get("/items/{item_id}")
async def read_item(
    item_id: int = Path(..., title="The ID of the item to get", ge=1, le=1000),
    code: str = Query(..., min_length=3, max_length=8, pattern=r"^[A-Z]+$"),
    size: float = Query(1.0, gt=0, lt=10.5),
):
    return {"item_id": item_id, "code": code, "size": size}
