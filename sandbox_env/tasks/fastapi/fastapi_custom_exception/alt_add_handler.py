# handlers registered with app.add_exception_handler, the stock kept in a class
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


class UnicornException(Exception):
    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


class OutOfStockError(Exception):
    def __init__(self, item: str, available: int):
        super().__init__(item, available)
        self.item, self.available = item, available


def unicorn_handler(request: Request, exc: UnicornException) -> JSONResponse:
    return JSONResponse({"message": "Oops! %s did something. There goes a rainbow..." % exc.name}, status_code=418)


def out_of_stock_handler(request: Request, exc: OutOfStockError) -> JSONResponse:
    body = {"error": "out_of_stock", "item": exc.item, "available": exc.available}
    return JSONResponse(body, status_code=409, headers={"Retry-After": "3600"})


class Stock:
    levels = {"apple": 3, "pear": 0}

    @classmethod
    def take(cls, item: str, quantity: int) -> int:
        have = cls.levels.get(item, 0)
        if have < quantity:
            raise OutOfStockError(item, have)
        cls.levels[item] = have - quantity
        return cls.levels[item]


app = FastAPI()
app.add_exception_handler(UnicornException, unicorn_handler)
app.add_exception_handler(OutOfStockError, out_of_stock_handler)


@app.get("/unicorns/{name}")
async def read_unicorn(name: str):
    if name != "yolo":
        return {"unicorn_name": name}
    raise UnicornException(name)


@app.post("/buy/{item}")
async def buy(item: str, quantity: int):
    left = Stock.take(item, quantity)
    return {"bought": quantity, "left": left}
