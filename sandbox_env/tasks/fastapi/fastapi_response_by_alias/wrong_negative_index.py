from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

app = FastAPI()


class Product(BaseModel):
    product_name: str = Field(alias="productName")
    unit_price: float = Field(alias="unitPrice")


PRODUCTS: list[Product] = []


def _get(index: int) -> Product:
    try:
        return PRODUCTS[index]
    except IndexError:
        raise HTTPException(status_code=404, detail="Product not found") from None


@app.post("/products/", response_model=Product, status_code=201)
def create_product(product: Product):
    PRODUCTS.append(product)
    return product


@app.get("/products/{index}", response_model=Product)
def read_product(index: int):
    return _get(index)


@app.get("/products/{index}/internal", response_model=Product, response_model_by_alias=False)
def read_product_internal(index: int):
    return _get(index)
