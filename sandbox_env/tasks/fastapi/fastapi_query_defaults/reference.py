from fastapi import FastAPI

app = FastAPI()

ITEMS = [f"item-{i}" for i in range(25)]


@app.get("/items/")
def list_items(skip: int = 0, limit: int = 10, q: str | None = None, short: bool = False):
    names = [n for n in ITEMS if q is None or q in n]
    page = names[skip : skip + limit]
    result = {"items": page, "count": len(page)}
    if not short:
        result["note"] = "Use short=true for a compact answer"
    return result
