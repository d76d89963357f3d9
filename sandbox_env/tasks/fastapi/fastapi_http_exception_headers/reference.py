from fastapi import FastAPI, Header, HTTPException

app = FastAPI()

ITEMS = {"foo": "The Foo Wrestlers", "bar": "The Bar Tenders"}


@app.get("/items/{item_id}")
def read_item(item_id: str):
    if item_id not in ITEMS:
        raise HTTPException(status_code=404, detail="Item not found", headers={"X-Error": "There goes my error"})
    return {"item": ITEMS[item_id]}


@app.get("/secure/{item_id}")
def read_secure(item_id: str, x_token: str | None = Header(default=None)):
    if x_token != "letmein":
        raise HTTPException(status_code=401, detail="Missing or wrong token", headers={"WWW-Authenticate": "Token"})
    if item_id not in ITEMS:
        raise HTTPException(status_code=404, detail="Item not found", headers={"X-Error": "There goes my error"})
    return {"item": ITEMS[item_id]}
