from enum import Enum
from typing import Annotated, Literal

from fastapi import APIRouter, Cookie, Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

READINGS = {
    "north": {"temp": 18.5, "humidity": 71, "light": 320},
    "south": {"temp": 24.0, "humidity": 55, "light": 910},
    "glass": {"temp": 29.5, "humidity": 83, "light": 640},
}
METRICS = ["temp", "humidity", "light"]


class Zone(str, Enum):
    north = "north"
    south = "south"
    glass = "glass"


async def signed_in_keeper(keeper: Annotated[str | None, Cookie()] = None) -> str:
    if not keeper:
        raise HTTPException(status_code=401, detail="sign in first", headers={"WWW-Authenticate": "Cookie"})
    return keeper


keepers = APIRouter(prefix="/keepers")
beds = APIRouter(prefix="/beds", dependencies=[Depends(signed_in_keeper)])


@keepers.post("/sign-in")
async def sign_in(name: str, response: Response):
    response.set_cookie("keeper", name, httponly=True)
    return {"signed_in": name}


@keepers.post("/sign-out")
async def sign_out(response: Response):
    response.delete_cookie("keeper")
    return {"signed_out": True}


@keepers.get("/me")
async def me(keeper: Annotated[str, Depends(signed_in_keeper)]):
    return {"keeper": keeper}


@beds.get("/")
async def zones():
    return {"zones": [zone.value for zone in Zone]}


@beds.get("/{zone}/readings")
async def readings(zone: Zone, metric: Annotated[list[Literal["temp", "humidity", "light"]], Query()] = []):
    wanted = metric or METRICS
    return {"zone": zone.value, "readings": {name: READINGS[zone.value][name] for name in wanted}}


app = FastAPI()


@app.exception_handler(StarletteHTTPException)
async def fault(request: Request, exc: StarletteHTTPException):
    return JSONResponse(
        status_code=exc.status_code,
        content={"fault": {"code": exc.status_code, "reason": exc.detail}},
        headers=exc.headers,
    )


app.include_router(keepers)
app.include_router(beds)
