from typing import Literal

from fastapi import Cookie, Depends, FastAPI, HTTPException, Query, Response
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as BaseHTTPException

TABLE = {
    ("north", "temp"): 18.5, ("north", "humidity"): 71, ("north", "light"): 320,
    ("south", "temp"): 24.0, ("south", "humidity"): 55, ("south", "light"): 910,
    ("glass", "temp"): 29.5, ("glass", "humidity"): 83, ("glass", "light"): 640,
}  # fmt: skip
Metric = Literal["temp", "humidity", "light"]


def fault_body(request, exc):
    body = {"fault": {"code": exc.status_code, "reason": exc.detail}}
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


app = FastAPI()
app.add_exception_handler(BaseHTTPException, fault_body)


class SignedIn:
    def __call__(self, keeper: str = Cookie("")):
        if keeper == "":
            raise HTTPException(401, "sign in first", {"WWW-Authenticate": "Cookie"})
        return keeper


signed_in = SignedIn()


@app.post("/keepers/sign-in")
def sign_in(name: str, response: Response):
    response.set_cookie(key="keeper", value=name, httponly=True)
    return {"signed_in": name}


@app.post("/keepers/sign-out")
def sign_out(response: Response):
    response.delete_cookie(key="keeper")
    return {"signed_out": True}


@app.get("/keepers/me")
def who(keeper: str = Depends(signed_in)):
    return {"keeper": keeper}


@app.get("/beds/", dependencies=[Depends(signed_in)])
def bed_zones():
    return {"zones": ["north", "south", "glass"]}


@app.get("/beds/{zone}/readings", dependencies=[Depends(signed_in)])
def bed_readings(zone: Literal["north", "south", "glass"], metric: list[Metric] = Query([])):
    names = metric if len(metric) > 0 else ["temp", "humidity", "light"]
    return {"zone": zone, "readings": {n: TABLE[zone, n] for n in names}}
