from collections.abc import Callable

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel


class AuditRoute(APIRoute):
    def get_route_handler(self) -> Callable:
        original = super().get_route_handler()
        name = self.path

        async def handler(request: Request) -> Response:
            try:
                response = await original(request)
            except RequestValidationError as exc:
                body = (await request.body()).decode()
                errors = [".".join(str(p) for p in err["loc"]) for err in exc.errors()]
                raise HTTPException(status_code=422, detail={"errors": errors, "body": body}) from exc
            response.headers["X-Route-Name"] = name
            return response

        return handler


class Item(BaseModel):
    name: str
    price: float


app = FastAPI()
router = APIRouter(prefix="/audited", route_class=AuditRoute)


@router.post("/items")
async def create_audited_item(item: Item):
    return {"name": item.name, "price": item.price}


@app.post("/plain/items")
async def create_plain_item(item: Item):
    return {"name": item.name, "price": item.price}


app.include_router(router)
