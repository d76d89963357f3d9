from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

app = FastAPI()


class NoteIn(BaseModel):
    text: str


NOTES: dict[int, dict] = {}
COUNTER = {"next": 1}


@app.post("/notes", status_code=201)
def create_note(note: NoteIn):
    note_id = len(NOTES) + 1
    NOTES[note_id] = {"id": note_id, "text": note.text}
    return NOTES[note_id]


@app.get("/notes/{note_id}")
def get_note(note_id: int):
    if note_id not in NOTES:
        raise HTTPException(status_code=404, detail="Note not found")
    return NOTES[note_id]


@app.delete("/notes/{note_id}", status_code=204)
def delete_note(note_id: int) -> None:
    if note_id not in NOTES:
        raise HTTPException(status_code=404, detail="Note not found")
    del NOTES[note_id]
