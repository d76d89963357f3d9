from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

app = FastAPI()
BUILDS = {"count": 0}


@app.get("/items/", summary="List items")
async def read_items():
    return [{"name": "Foo"}]


@app.get("/openapi-builds", include_in_schema=False)
async def openapi_builds():
    return {"builds": BUILDS["count"]}


def custom_openapi():
    if app.openapi_schema:
        return app.openapi_schema
    BUILDS["count"] += 1
    schema = get_openapi(
        title="Custom title",
        version="2.5.0",
        summary="This is a very custom OpenAPI schema",
        description="Here's a longer description of the custom **OpenAPI** schema",
        routes=app.routes,
    )
    schema["info"]["x-logo"] = {"url": "https://fastapi.tiangolo.com/img/logo-margin/logo-teal.png"}
    schema["paths"]["/items/"]["get"]["x-code-samples"] = [{"lang": "shell", "source": "curl /items/"}]
    app.openapi_schema = schema
    return app.openapi_schema


app.openapi = custom_openapi
