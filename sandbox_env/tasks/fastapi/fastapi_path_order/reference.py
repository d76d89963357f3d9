from fastapi import FastAPI

app = FastAPI()


@app.get("/users/me")
def read_current_user():
    return {"user_id": "me", "name": "Current User"}


@app.get("/users/{user_id}")
def read_user(user_id: int):
    return {"user_id": user_id}


@app.get("/files/{file_path:path}")
def read_file(file_path: str):
    return {"file_path": file_path}
