# ConfigDict and Annotated aliases, the index checked by a try/except on the list
from typing import Annotated

from fastapi import FastAPI, HTTPException, status
from pydantic import BaseModel, ConfigDict, Field


class Product(BaseModel):
    model_config = ConfigDict(populate_by_name=False)

    product_name: Annotated[str, Field(alias="productName")]
    unit_price: Annotated[float, Field(alias="unitPrice")]


PRODUCTS: list[Product] = []

app = FastAPI()


def lookup(index: int) -> Product:
    if index < 0:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Product not found")
    try:
        return PRODUCTS[index]
    except IndexError:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Product not found") from None


@app.post("/products/", status_code=status.HTTP_201_CREATED, response_model=Product)
async def create_product(product: Product):
    PRODUCTS.append(product)
    return product


@app.get("/products/{index}", response_model=Product)
async def read_product(index: int):
    return lookup(index)


@app.get("/products/{index}/internal", response_model=Product, response_model_by_alias=False)
async def read_product_internal(index: int):
    return lookup(index)
