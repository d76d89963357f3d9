# ids from itertools.count, the 204 route returning an explicit empty Response
from itertools import count

from fastapi import FastAPI, HTTPException, Response, status
from pydantic import BaseModel


class NoteIn(BaseModel):
    text: str


class Note(NoteIn):
    id: int


NOTES: dict[int, Note] = {}
IDS = count(1)

app = FastAPI()


def find(note_id: int) -> Note:
    if note_id not in NOTES:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Note not found")
    return NOTES[note_id]


@app.post("/notes", status_code=status.HTTP_201_CREATED)
async def create_note(body: NoteIn) -> Note:
    note = Note(id=next(IDS), text=body.text)
    NOTES[note.id] = note
    return note


@app.get("/notes/{note_id}")
async def get_note(note_id: int) -> Note:
    return find(note_id)


@app.delete("/notes/{note_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_note(note_id: int):
    NOTES.pop(find(note_id).id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
