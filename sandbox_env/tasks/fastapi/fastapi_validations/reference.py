from typing import Annotated

from fastapi import FastAPI, Path, Query

app = FastAPI()


@app.get("/items/{item_id}")
def read_item(
    item_id: Annotated[int, Path(title="The ID of the item to get", ge=1, le=1000)],
    code: Annotated[str, Query(min_length=3, max_length=8, pattern="^[A-Z]+$")],
    size: Annotated[float, Query(gt=0, lt=10.5)] = 1.0,
):
    return {"item_id": item_id, "code": code, "size": size}
