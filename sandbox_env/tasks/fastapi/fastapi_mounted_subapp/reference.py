from fastapi import FastAPI

app = FastAPI(title="Main API")


@app.get("/app")
def read_main():
    return {"message": "Hello World from main app"}


subapi = FastAPI(title="Sub API")


@subapi.get("/sub")
def read_sub():
    return {"message": "Hello World from sub API"}


@subapi.get("/sub/{n}")
def double(n: int):
    return {"double": 2 * n}


app.mount("/subapi", subapi)
