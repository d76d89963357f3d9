# a StrEnum and a lookup table instead of branches
from enum import StrEnum

from fastapi import FastAPI


class ModelName(StrEnum):
    alexnet = "alexnet"
    resnet = "resnet"
    lenet = "lenet"


MESSAGES = {
    ModelName.alexnet: "Deep Learning FTW!",
    ModelName.lenet: "LeCNN all the images",
    ModelName.resnet: "Have some residuals",
}

app = FastAPI()


@app.get("/models/{model_name}")
async def get_model(model_name: ModelName):
    return {"model_name": model_name.value, "message": MESSAGES[model_name]}
