# default-value Query() parameters instead of Annotated
from fastapi import FastAPI, Query

app = FastAPI()


@app.get("/items/")
def read_items(tag: list[str] = Query(default=[]), item_query: str | None = Query(default=None, alias="item-query")):
    return {"tags": list(tag), "item_query": item_query}


@app.get("/bulk")
def bulk(id: list[int] = Query(...)):
    return {"ids": id, "total": sum(id)}
