from typing import Annotated

from fastapi import FastAPI, Query

app = FastAPI()


@app.get("/items/")
def read_items(
    tag: Annotated[list[str], Query()] = [],
    item_query: Annotated[str | None, Query(alias="item-query")] = None,
):
    return {"tags": tag, "item_query": item_query}


@app.get("/bulk")
def bulk(id: Annotated[list[int], Query()]):
    return {"ids": id, "total": sum(id)}
