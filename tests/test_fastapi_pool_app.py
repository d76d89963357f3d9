"""A correct fastapi app whose handler computes its answer in a multiprocessing.Pool scores 1.0, every time.

Issue 35, item 8: such an app lost about one grading in five, on an idle machine too,
with every check zeroed by a canary that "did not finish within 10 s". Three things of the
grader's own made it lose, none of them the app's:

- the signal fence (runtime/grader/process_guard.fence_signals) let the app's processes signal
  only the app's first process, so `Pool.terminate()` (what leaving `with Pool(...)` does)
  could not send SIGTERM to its own workers: the handler raised PermissionError (a 500)
  whenever a worker had not exited by itself within 0.1 s, and the worker, blocked for good
  on the queue lock the terminating pool holds, kept a copy of the request's connection, so
  the driver never saw the app close it and the next request of the session (often a
  canary) hung until its limit stopped the run;
- uvicorn's SIGTERM handler (which only notes the signal) was inherited by every process the
  app forked, so a worker that did get SIGTERM went on waiting and the pool's join hung;
- the app's `__main__` was app_host.py, which the spawn and forkserver start methods run again
  in every worker: it failed there at its first import, and the Pool started workers without end.

Each app below is the reference of fastapi_status_204 with GET /notes/{id} answered through a
Pool: a plain map with the default start method (graded several times, since the first loss
was a race), a map under the spawn start method, and a "first answer wins" lookup that leaves
the pool while a worker is still busy (the pool must terminate it). No wall time is asserted.
"""

from __future__ import annotations

import asyncio

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families import grade_final
from sandbox_env.families.fastapi import FAMILY
from sandbox_env.grading.grader import Grader

pytestmark = pytest.mark.docker

TASK = TASKS_DIR / "fastapi" / "fastapi_status_204"
REFERENCE = (TASK / "reference.py").read_text()
GRADINGS = 5
AT_ONCE = 3

_PLAIN_GET = """    return NOTES[note_id]


@app.delete"""
assert _PLAIN_GET in REFERENCE


def _with_get(helpers: str, body: str) -> str:
    """The reference with module-level helpers and GET /notes/{id}'s answer computed by `body`."""
    source = REFERENCE.replace("app = FastAPI()", "import multiprocessing\nimport time\n\n" + helpers + "\n\napp = FastAPI()")
    return source.replace(_PLAIN_GET, body + "\n\n\n@app.delete")


_SAME = """
def _same(ch):
    return ch
"""

# `with Pool(2) as p: p.map(...)`: the pool's default start method (fork on Python 3.13)
POOL_MAP = _with_get(
    _SAME,
    """    with multiprocessing.Pool(2) as pool:
        text = "".join(pool.map(_same, list(NOTES[note_id]["text"])))
    return {"id": note_id, "text": text}""",
)

# the same under the spawn start method: every worker is a fresh interpreter that imports app.py
POOL_MAP_SPAWN = _with_get(
    _SAME,
    """    with multiprocessing.get_context("spawn").Pool(2) as pool:
        text = "".join(pool.map(_same, list(NOTES[note_id]["text"])))
    return {"id": note_id, "text": text}""",
)

# two sources asked at once, the first answer taken; the slow one is still looking when the pool is left
POOL_FIRST_ANSWER = _with_get(
    """
def _look_up(source_and_id):
    source, note_id = source_and_id
    if source == "archive":  # only old notes are archived, and looking there is slow
        time.sleep(60)
        return None
    return NOTES.get(note_id)
""",
    """    with multiprocessing.Pool(2) as pool:
        for found in pool.imap_unordered(_look_up, [("memory", note_id), ("archive", note_id)]):
            if found is not None:
                return found
    raise HTTPException(status_code=404, detail="Note not found")""",
)


async def _grade(backend, image, source: str):
    row = FAMILY.compile_task(TASK)
    return await grade_final(row, {"files": {"app.py": source}}, Grader(backend, image, 90))


async def _grade_all(backend, image, sources: list[str]):
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(source: str):
        async with gate:
            return await _grade(backend, image, source)

    return await asyncio.gather(*(one(s) for s in sources))


def _assert_full_marks(grades) -> None:
    got = [(g.score, g.reason) for g in grades]
    assert all(g.score == 1.0 and g.scoring_error is None and not g.tampered for g in grades), got


async def test_a_pool_map_in_a_handler_scores_one_every_time(backend, image):
    _assert_full_marks(await _grade_all(backend, image, [POOL_MAP] * GRADINGS))


async def test_a_pool_under_spawn_and_a_pool_left_while_a_worker_is_busy_score_one(backend, image):
    _assert_full_marks(await _grade_all(backend, image, [POOL_MAP_SPAWN, POOL_FIRST_ANSWER]))
