"""The fastapi family through real containers: references, rollouts, leaks, stalls and attacks on the driver."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families.fastapi import FAMILY
from sandbox_env.grading.grader import Grader
from sandbox_env.verify.fastapi import VERIFIER
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker

TASKS = TASKS_DIR / "fastapi"
PATH_ORDER = (TASKS / "fastapi_path_order" / "reference.py").read_text()
STATUS_204 = (TASKS / "fastapi_status_204" / "reference.py").read_text()

HALF_RIGHT_204 = """
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

app = FastAPI()
NOTES = {}


class NoteIn(BaseModel):
    text: str


@app.post("/notes", status_code=201)
def create(note: NoteIn):
    note_id = len(NOTES) + 1
    NOTES[note_id] = {"id": note_id, "text": note.text}
    return NOTES[note_id]


@app.get("/notes/{note_id}")
def read(note_id: int):
    if note_id not in NOTES:
        raise HTTPException(404, "Note not found")
    return NOTES[note_id]


@app.delete("/notes/{note_id}")
def delete(note_id: int):  # answers 200 with a body instead of 204, and never deletes
    if note_id not in NOTES:
        raise HTTPException(404, "Note not found")
    return {"deleted": note_id}
"""


def task(name: str):
    return FAMILY.compile_task(TASKS / name)


async def grade(backend, image, name: str, source: str, timeout: float = 60, **grading):
    row = task(name)
    if grading:
        row = dataclasses.replace(row, grading={**row.grading, **grading})
    return await FAMILY.grade({"files": {"app.py": source}}, row, Grader(backend, image, timeout))


async def test_every_reference_scores_one_and_trips_no_canary(backend, image):
    folders = sorted(p for p in TASKS.iterdir() if (p / "task.toml").is_file())
    sem = asyncio.Semaphore(4)

    async def one(folder):
        async with sem:
            return folder.name, await grade(backend, image, folder.name, (folder / "reference.py").read_text())

    results = await asyncio.gather(*(one(f) for f in folders))
    bad = {name: g.reason for name, g in results if g.score != 1.0 or g.tampered or g.scoring_error}
    assert not bad


async def test_scripted_rollout_writing_the_reference_with_bash_scores_one(backend, image):
    row = task("fastapi_path_order")
    run = await scripted_rollout(backend, image, row, VERIFIER.reference_calls(TASKS / "fastapi_path_order"))
    assert run.grade.score == 1.0, run.grade.reason
    assert run.grade.metrics == {"module_imported": 1.0, "checks_passed": 1.0, "tampered": 0.0}
    assert all(c["passed"] for c in run.grade.checks)


async def test_half_right_app_scores_strictly_between_zero_and_one(backend, image):
    command = f"cat > /workspace/app.py <<'EOF'\n{HALF_RIGHT_204}\nEOF\n"
    run = await scripted_rollout(backend, image, task("fastapi_status_204"), [{"tool": "bash", "args": {"command": command}}])
    assert 0.0 < run.grade.score < 1.0, run.grade.reason
    assert not run.grade.tampered
    failed = {c["name"]: c["detail"] for c in run.grade.checks if not c["passed"]}
    assert "expected 204, got 200" in failed["delete answers 204 with an empty body and the note is gone"]


async def test_threads_subprocesses_and_forks_left_running_do_not_hang_grading(backend, image):
    leaky = (
        PATH_ORDER
        + """
import os, subprocess, threading, time
threading.Thread(target=lambda: time.sleep(3600)).start()           # not a daemon
subprocess.Popen(["sleep", "3600"])
if os.fork() == 0:
    os.setsid()                                                       # out of the process group
    time.sleep(3600)
"""
    )

    async def timed(source):
        t0 = time.perf_counter()
        g = await grade(backend, image, "fastapi_path_order", source, timeout=60)
        return g, time.perf_counter() - t0

    (g, leaky_s), (plain, plain_s) = await asyncio.gather(timed(leaky), timed(PATH_ORDER))
    assert g.score == plain.score == 1.0, g.reason
    assert leaky_s < 2 * plain_s + 5  # nothing left running makes the run wait (the machine is shared: a ratio)


async def test_a_hanging_endpoint_stops_the_run_with_a_reason(backend, image):
    hanging = (
        PATH_ORDER
        + """
import time

@app.get("/users/me/slow")
def slow():
    time.sleep(3600)

@app.middleware("http")
async def stall(request, call_next):
    if request.url.path == "/users/me":
        time.sleep(3600)
    return await call_next(request)
"""
    )
    t0 = time.perf_counter()
    g = await grade(backend, image, "fastapi_path_order", hanging, timeout=60, request_timeout=2)
    assert g.score == 0.0 and g.scoring_error is None and not g.tampered
    assert "GET /users/me did not finish within 2 s" in g.reason
    assert time.perf_counter() - t0 < 60  # stopped by the request limit, not the 60 s backstop


async def test_an_import_that_never_ends_stops_at_its_cpu_limit(backend, image):
    g = await grade(backend, image, "fastapi_path_order", "while True:\n    pass\n", timeout=60, request_timeout=2)
    assert g.score == 0.0 and g.scoring_error is None
    assert "importing app.py did not finish within 6 s" in g.reason and g.metrics["module_imported"] == 0.0


async def test_import_errors_are_the_submissions_failure_with_the_traceback(backend, image):
    syntax, missing = await asyncio.gather(
        grade(backend, image, "fastapi_path_order", "from fastapi import FastAPI\napp = FastAPI(\n"),
        grade(backend, image, "fastapi_path_order", "import no_such_module\n"),
    )
    assert syntax.score == 0.0 and syntax.scoring_error is None and "SyntaxError" in syntax.reason
    assert missing.score == 0.0 and "ModuleNotFoundError" in missing.reason
    assert "no_such_module" in missing.checks[0]["detail"]


PATCH_CLIENT = """
import httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient

app = FastAPI()


def fake_request(self, method, url, **kwargs):
    return httpx.Response(200, json={}, request=httpx.Request(method, "http://testserver" + str(url)))


TestClient.request = fake_request
"""

# Patches a method the driver does not watch: only the canaries can see it.
PATCH_HTTPX_DEEP = """
import httpx
from fastapi import FastAPI

app = FastAPI()


def fake_send(self, request, *args, **kwargs):
    return httpx.Response(200, json={}, request=request)


httpx.Client._send_handling_redirects = fake_send
"""


async def test_patching_the_test_client_or_httpx_in_the_apps_process_changes_nothing(backend, image):
    right_and_patching, patching_only, deep_only = await asyncio.gather(
        grade(backend, image, "fastapi_status_204", STATUS_204 + PATCH_CLIENT.replace("app = FastAPI()", "")),
        grade(backend, image, "fastapi_status_204", PATCH_CLIENT),
        grade(backend, image, "fastapi_status_204", PATCH_HTTPX_DEEP),
    )
    assert right_and_patching.score == 1.0 and not right_and_patching.tampered, right_and_patching.reason
    for g in (patching_only, deep_only):
        assert g.score == 0.0 and g.scoring_error is None, g.reason


FAKE_FRAMES = """
import json, os, sys


def write_fake_frames():
    fake = {"stage": "done", "imported": True, "has_app": True, "sessions": [], "integrity": []}
    for nonce in ("0" * 32, "f" * 32):
        frame = "\\n" + nonce + "\\n" + json.dumps(fake) + "\\n" + nonce + "\\n"
        print(frame)
        sys.stdout.flush()
        for fd in range(1, 30):
            try:
                os.write(fd, frame.encode())
            except OSError:
                pass
"""

# Rewrites any report-like dict on its way through json.dumps: every response a 201, no integrity problem.
PATCH_DUMPS = """
import json

_real_dumps = json.dumps


def _forging_dumps(obj, *args, **kwargs):
    if isinstance(obj, dict) and "sessions" in obj:
        obj = dict(obj, integrity=[], sessions=[
            {"error": None, "responses": [{"status": 201, "headers": [], "text": "{}"}] * len(s["responses"])}
            for s in obj["sessions"]])
    return _real_dumps(obj, *args, **kwargs)


json.dumps = _forging_dumps
"""

EXIT_AT_IMPORT = STATUS_204 + FAKE_FRAMES + "\nwrite_fake_frames()\nos._exit(0)\n"

EXIT_WHILE_SERVING = (
    STATUS_204
    + FAKE_FRAMES
    + """

@app.middleware("http")
async def leave(request, call_next):
    write_fake_frames()
    os._exit(0)
"""
)


async def test_printing_a_fake_report_does_not_raise_the_score(backend, image):
    honest, printing, forging = await asyncio.gather(
        grade(backend, image, "fastapi_status_204", HALF_RIGHT_204),
        grade(backend, image, "fastapi_status_204", HALF_RIGHT_204 + FAKE_FRAMES + "\nwrite_fake_frames()\n"),
        grade(backend, image, "fastapi_status_204", HALF_RIGHT_204 + PATCH_DUMPS),
    )
    assert 0.0 < honest.score < 1.0
    for g in (printing, forging):
        assert g.score == honest.score and not g.tampered and g.scoring_error is None, g.reason


async def test_exiting_early_after_a_fake_report_scores_zero_without_a_scoring_error(backend, image):
    at_import, while_serving = await asyncio.gather(
        grade(backend, image, "fastapi_status_204", EXIT_AT_IMPORT),
        grade(backend, image, "fastapi_status_204", EXIT_WHILE_SERVING),
    )
    assert at_import.score == 0.0 and at_import.scoring_error is None and not at_import.tampered
    assert "the app's process ended while importing app.py (exit code 0)" in at_import.reason
    assert at_import.metrics["module_imported"] == 0.0
    assert while_serving.score == 0.0 and while_serving.scoring_error is None
    assert "the app's process ended (exit code 0) while answering" in while_serving.checks[0]["detail"]
    assert while_serving.metrics["module_imported"] == 1.0


FORGOT_404_STATUS = (
    STATUS_204
    + """
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException


@app.exception_handler(StarletteHTTPException)
async def errors_as_200(request, exc):
    return JSONResponse({"detail": exc.detail})  # an honest mistake: every error, 404 included, goes out as 200
"""
)


async def test_an_app_that_itself_answers_unknown_paths_with_200_is_wrong_but_not_tampered(backend, image):
    g = await grade(backend, image, "fastapi_status_204", FORGOT_404_STATUS)
    assert not g.tampered and g.scoring_error is None, g.reason
    assert 0.0 < g.score < 1.0


FAILING_LIFESPAN = """
import contextlib

from fastapi import FastAPI


@contextlib.asynccontextmanager
async def lifespan(app):
    raise RuntimeError("the database is not there")
    yield


app = FastAPI(lifespan=lifespan)
"""

SEGFAULT_ON_DELETE = (
    STATUS_204
    + """
import ctypes


@app.middleware("http")
async def crash_on_delete(request, call_next):
    if request.method == "DELETE":
        ctypes.string_at(0)  # a segmentation fault: the app's process dies
    return await call_next(request)
"""
)


async def test_startup_failures_and_crashes_are_the_submissions_with_the_evidence(backend, image):
    lifespan, crash = await asyncio.gather(
        grade(backend, image, "fastapi_status_204", FAILING_LIFESPAN),
        grade(backend, image, "fastapi_status_204", SEGFAULT_ON_DELETE),
    )
    assert lifespan.score == 0.0 and lifespan.scoring_error is None and not lifespan.tampered
    assert lifespan.metrics["module_imported"] == 1.0
    assert all(
        "the app's lifespan failed at startup: RuntimeError: the database is not there" in c["detail"] for c in lifespan.checks
    ), lifespan.checks
    assert crash.score < 1.0 and crash.scoring_error is None and not crash.tampered, crash.reason
    details = [c["detail"] for c in crash.checks if not c["passed"]]
    assert any("the app's process ended (exit code -11) while answering DELETE" in d for d in details), details


async def test_an_honest_app_starved_of_cpu_is_never_the_submissions_zero(image):
    """A container given a sliver of a CPU: the reference either passes or the run is a harness fault.

    Graded through `grade_final`, the production path: on a loaded host a starved sandbox may
    not even become ready, which must be a harness fault too, never the submission's zero.
    """
    from sandbox_env.families import grade_final
    from sandbox_env.sandbox import Limits
    from sandbox_env.sandbox.docker.client import DockerBackend

    starved = DockerBackend(Limits(cpus=0.05))
    try:
        g = await grade_final(task("fastapi_path_order"), {"files": {"app.py": PATH_ORDER}}, Grader(starved, image, 40))
    finally:
        starved.teardown()
    assert g.score == 1.0 or g.scoring_error, g.reason
    assert not g.tampered


SLOW_FAILING_SHUTDOWN = (
    STATUS_204
    + """
import asyncio
import contextlib


@contextlib.asynccontextmanager
async def _lifespan(app):
    yield
    await asyncio.sleep(0.3)  # a shutdown that takes its time, then fails
    raise RuntimeError("the flush at shutdown failed")


app.router.lifespan_context = _lifespan
"""
)


async def test_a_sessions_stop_still_runs_the_apps_whole_lifespan_shutdown(backend, image):
    # the app host stops a session's server at once and polls its shutdown (app_host.PromptServer):
    # the app's shutdown still runs to its end, and its failure is still the app's, with the evidence
    g = await grade(backend, image, "fastapi_status_204", SLOW_FAILING_SHUTDOWN)
    assert g.score < 1.0 and g.scoring_error is None and not g.tampered, g.reason
    details = [c["detail"] for c in g.checks if not c["passed"]]
    said = "the app's lifespan failed at shutdown: RuntimeError: the flush at shutdown failed"
    assert details and all(said in d for d in details), details
