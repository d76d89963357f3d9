from collections.abc import AsyncIterable
from typing import Annotated

from fastapi import FastAPI, Header
from fastapi.sse import EventSourceResponse, ServerSentEvent

app = FastAPI()


@app.get("/ticks", response_class=EventSourceResponse)
async def ticks(last_event_id: Annotated[int | None, Header()] = None) -> AsyncIterable[ServerSentEvent]:
    start = last_event_id + 1 if last_event_id else 0
    for n in range(start, 5):
        yield ServerSentEvent(
            data={"n": n, "square": n * n},
            event="tick",
            id=str(n),
            retry=2000 if n == 0 else None,
        )
    yield ServerSentEvent(raw_data="done", event="end")
