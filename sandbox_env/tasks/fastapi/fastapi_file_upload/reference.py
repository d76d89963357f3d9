from typing import Annotated

from fastapi import FastAPI, File, Form, UploadFile

app = FastAPI()


@app.post("/files/")
async def create_file(file: Annotated[bytes, File()]):
    return {"file_size": len(file)}


@app.post("/uploadfile/")
async def create_upload_file(file: UploadFile):
    content = await file.read()
    first = content.decode("utf-8").split("\n", 1)[0]
    return {"filename": file.filename, "content_type": file.content_type, "size": len(content), "first_line": first}


@app.post("/uploadfiles/")
async def create_upload_files(files: list[UploadFile]):
    total = 0
    for f in files:
        total += len(await f.read())
    return {"filenames": [f.filename for f in files], "total_size": total}


@app.post("/profile/")
async def profile(name: Annotated[str, Form()], avatar: UploadFile | None = None):
    return {"name": name, "avatar": avatar.filename if avatar else None}
