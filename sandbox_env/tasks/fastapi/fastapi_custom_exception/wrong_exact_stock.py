from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


class UnicornException(Exception):
    def __init__(self, name: str):
        self.name = name


class OutOfStockError(Exception):
    def __init__(self, item: str, available: int):
        self.item = item
        self.available = available


app = FastAPI()
STOCK = {"apple": 3, "pear": 0}


@app.exception_handler(UnicornException)
async def unicorn_handler(request: Request, exc: UnicornException):
    return JSONResponse(status_code=418, content={"message": f"Oops! {exc.name} did something. There goes a rainbow..."})


@app.exception_handler(OutOfStockError)
async def stock_handler(request: Request, exc: OutOfStockError):
    return JSONResponse(
        status_code=409,
        content={"error": "out_of_stock", "item": exc.item, "available": exc.available},
        headers={"Retry-After": "3600"},
    )


@app.get("/unicorns/{name}")
def read_unicorn(name: str):
    if name == "yolo":
        raise UnicornException(name=name)
    return {"unicorn_name": name}


@app.post("/buy/{item}")
def buy(item: str, quantity: int):
    stock = STOCK.get(item, 0)
    if quantity >= stock:
        raise OutOfStockError(item, stock)
    STOCK[item] = stock - quantity
    return {"bought": quantity, "left": STOCK[item]}
