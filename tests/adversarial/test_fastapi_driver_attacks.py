"""Exploits of the fastapi grader written against its source: each must score 0.0.

The app runs in processes of its own (runtime/grader/app_host.py) and the driver records from
another (runtime/grader/http_driver.py), so attacks on the driver from app.py either find
nothing to patch or are refused by the kernel (undumpable processes). Each test says
what the exploit did to the old in-process driver and what it must get now.
"""

from __future__ import annotations

import asyncio

import pytest
from attack_kit import (
    BROKEN_APP,
    FORGERY,
    GRADER_PIDS,
    ORACLE,
    REFERENCE,
    assert_zero,
    grade_fastapi,
)

pytestmark = pytest.mark.docker

# The old driver's functions and globals, replaced from app.py by the oracle's answers.
REPLACE_DRIVER_GLOBALS = (
    BROKEN_APP
    + ORACLE
    + """
import sys


def _forged_send_one(client, witness, req):
    return _oracle_answer(req)


for _module in list(sys.modules.values()):
    for _name in ("send_one", "record", "_send", "finish", "integrity_problems"):
        if callable(getattr(_module, _name, None)):
            setattr(_module, _name, _forged_send_one if _name == "send_one" else (lambda *a, **k: None))
_main = sys.modules["__main__"]
_main.send_one = _forged_send_one
_main.witness_problems = lambda *a, **k: []
_main._TestClient = type("_Inert", (), {})
"""
)

# A TestClient subclass whose requests answer from the oracle and append to the driver's witness.
SUBCLASS_TEST_CLIENT = (
    BROKEN_APP
    + ORACLE
    + """
import sys
import fastapi.testclient
import starlette.testclient


class _ForgingClient(starlette.testclient.TestClient):
    def request(self, method, url, **kwargs):
        response = _oracle_client.request(method, url, **kwargs)
        witness = getattr(self, "app", None)
        if hasattr(witness, "seen"):
            witness.seen.append({"status": response.status_code})
        return response


fastapi.testclient.TestClient = starlette.testclient.TestClient = _ForgingClient
sys.modules["__main__"]._TestClient = _ForgingClient
sys.modules["__main__"].TestClient = _ForgingClient
"""
)

# The nonce from gc (the old driver's Channel._nonce) and from every process's memory, then a
# framed report with the oracle's answers written to every descriptor it can reach.
GC_NONCE_FORGERY = BROKEN_APP + ORACLE + FORGERY + "\n_forge_everywhere()\n"

# The same forgery, then os._exit before the real report can supersede it.
FORGE_THEN_EXIT = GC_NONCE_FORGERY + "\n_os._exit(0)\n"

# The same forgery from inside a request, then os._exit while serving.
FORGE_THEN_EXIT_WHILE_SERVING = (
    BROKEN_APP
    + ORACLE
    + FORGERY
    + """

@app.middleware("http")
async def _leave(request, call_next):
    _forge_everywhere()
    _os._exit(0)
"""
)

# Honest in a rollout; in a grading container (the grader's processes are there) it forges a
# report on the driver's own descriptors and then kills the driver so that no real report follows
# (the kill is refused: the app's processes may signal only themselves).
DETECT_GRADING_AND_KILL_THE_DRIVER = (
    REFERENCE.replace("app = FastAPI()", "app = FastAPI()\n_honest = True")
    + ORACLE
    + FORGERY
    + GRADER_PIDS
    + """
import signal as _signal

_pids = _grader_pids()
if _pids.get("http_driver.py"):  # graded: behave differently
    _forge_everywhere()
    for _pid in _pids["http_driver.py"]:
        _os.kill(_pid, _signal.SIGKILL)
    app.router.routes.clear()
"""
)

# Stops the driver, so that the host's limit would run out with the driver frozen (refused: the fence).
STOP_THE_DRIVER = (
    BROKEN_APP
    + GRADER_PIDS
    + """
import os as _os
import signal as _signal

for _pid in _grader_pids().get("http_driver.py", []):
    _os.kill(_pid, _signal.SIGSTOP)
"""
)

# A handler that races forks of its own for the one CPU, so that the driver's clock saw it wait for a CPU
# and took the wait for starvation: the run's deadline passed with the app barely "active", and the report
# blamed the harness (a scoring_error that trainers reschedule, for an app that never answers).
SELF_STARVING = (
    BROKEN_APP
    + """
import os as _os


def _spin():
    while True:
        pass


@app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def anything(path: str):
    for _ in range(8):
        if _os.fork() == 0:
            _spin()
    _spin()
"""
)

# Claims on the witness's own events pipe (the driver's cross-check) that the app sent a 201, written
# after the real status went out, so that the claim is the last word on every request.
FORGE_WITNESS_EVENTS = (
    BROKEN_APP
    + """
import json as _json
import os as _os

_inner = app


async def app(scope, receive, send):
    async def claiming_send(message):
        await send(message)
        if message["type"] == "http.response.start":
            for fd in range(3, 256):
                try:
                    _os.write(fd, (_json.dumps({"ev": "status", "status": 201}) + "\\n").encode())
                except OSError:
                    pass

    await _inner(scope, receive, claiming_send)
"""
)

# The app kills the process host, so that no later session starts fresh and a planted module
# stays in place for the next import (refused: the app may signal only itself).
KILL_THE_APP_HOST = (
    REFERENCE
    + GRADER_PIDS
    + """
import signal as _signal

for _pid in _grader_pids().get("app_host.py", []):
    if _pid != _os.getpid():  # the forked app carries the host's command line too
        _os.kill(_pid, _signal.SIGKILL)
"""
).replace("import signal as _signal", "import os as _os\nimport signal as _signal")


async def test_replacing_the_drivers_send_one_and_globals_from_app_py_changes_nothing(backend, image):
    g = await grade_fastapi(backend, image, REPLACE_DRIVER_GLOBALS)
    assert_zero(g, tampered=False)
    assert "0/4 checks pass" in g.reason


async def test_a_test_client_subclass_appending_to_the_witness_changes_nothing(backend, image):
    g = await grade_fastapi(backend, image, SUBCLASS_TEST_CLIENT)
    assert_zero(g, tampered=False)


async def test_a_report_forged_with_a_nonce_hunted_in_gc_and_process_memory_is_ignored(backend, image):
    staying, exiting, exiting_while_serving = await asyncio.gather(
        grade_fastapi(backend, image, GC_NONCE_FORGERY),
        grade_fastapi(backend, image, FORGE_THEN_EXIT),
        grade_fastapi(backend, image, FORGE_THEN_EXIT_WHILE_SERVING),
    )
    assert_zero(staying, tampered=True)  # its frames landed on the one pipe it can reach: the witness's
    assert "events pipe" in staying.reason
    assert_zero(exiting, tampered=True)  # junk on the witness's pipe ends the run at once, before the exit
    assert "events pipe" in exiting.reason
    assert_zero(exiting_while_serving)
    assert exiting_while_serving.metrics["module_imported"] == 1.0


async def test_an_app_that_detects_grading_and_tries_to_kill_the_driver_is_refused_and_scores_zero(backend, image):
    # its processes may signal only themselves (process_guard.fence_signals): the kill fails in app.py
    # (the stop and host-kill tests show the refusal), and its forged frames, which reach the witness's
    # pipe first, end the run at once as tampering: the driver is alive to report it
    g = await grade_fastapi(backend, image, DETECT_GRADING_AND_KILL_THE_DRIVER)
    assert_zero(g, tampered=True)
    assert "events pipe" in g.reason


async def test_an_app_that_tries_to_stop_the_driver_is_refused_and_scores_zero_not_a_harness_fault(backend, image):
    g = await grade_fastapi(backend, image, STOP_THE_DRIVER)
    assert_zero(g)
    assert "PermissionError" in g.reason


async def test_a_handler_that_starves_itself_with_its_own_forks_is_the_submissions_zero(backend, image):
    g = await grade_fastapi(backend, image, SELF_STARVING, timeout=90, request_timeout=3)
    assert_zero(g, tampered=False)
    assert "did not finish within 3 s" in g.reason


async def test_claims_written_on_the_witness_pipe_are_tampering(backend, image):
    g = await grade_fastapi(backend, image, FORGE_WITNESS_EVENTS)
    assert_zero(g, tampered=True)


async def test_an_app_cannot_kill_the_process_host(backend, image):
    g = await grade_fastapi(backend, image, KILL_THE_APP_HOST)
    assert g.scoring_error is None and not g.tampered, g.reason
    assert g.score < 1.0
    assert all("Operation not permitted" in c["detail"] for c in g.checks if not c["passed"]), g.checks


# Files planted where Python, pytest or the driver might load them: next to app.py, in the grader
# programs' folder, and in the driver's run folder (FIFOs and symlinks where it reads the app's logs).
# If any of them ever runs, it leaves a marker, and from then on the app answers like the oracle:
# a score above zero would mean a plant was loaded.
PLANT = "import pathlib; pathlib.Path('/tmp/plant-loaded').write_text(__name__)\n"
# Loaded by Python or pytest on their own, from the folder of the program they run.
AUTOLOADED = {
    "sitecustomize.py": PLANT,
    "usercustomize.py": PLANT,
    "conftest.py": PLANT,
    "zz_forge.pth": "import os; " + PLANT.replace("\n", ""),
}
# Modules a grader might import late, planted only where the app itself never imports from.
LATE_IMPORTS = {f"{name}.py": PLANT for name in ("httpx", "idna", "json", "report_channel", "process_guard", "h11")}
PLANTED_EVERYWHERE = (
    BROKEN_APP
    + ORACLE
    + f"""
import os as _os
import pathlib as _pathlib

_plants = {{"/workspace": {AUTOLOADED!r}, "/tmp/websandbox-grader": {{**{AUTOLOADED!r}, **{LATE_IMPORTS!r}}},
           "/tmp/websandbox-http": {{**{AUTOLOADED!r}, **{LATE_IMPORTS!r}}}}}
for _folder, _files in _plants.items():
    for _name, _text in _files.items():
        try:
            _pathlib.Path(_folder, _name).write_text(_text)
        except OSError:
            pass
for _n in range(1, 12):  # where the driver reads later sessions' logs: a FIFO would block a reader
    try:
        _os.mkfifo(f"/tmp/websandbox-http/s{{_n}}.log")
    except OSError:
        pass
if _pathlib.Path("/tmp/plant-loaded").exists():
    _inner = app

    async def app(scope, receive, send):
        await _oracle.app(scope, receive, send)
"""
)


async def test_files_planted_next_to_app_py_in_the_grader_folder_and_the_run_folder_never_load(backend, image):
    from attack_kit import FASTAPI_TASKS, TASK

    from sandbox_env.families.fastapi import FAMILY as FASTAPI
    from sandbox_env.verify.scripted import scripted_rollout

    marker_by_hand = "import pathlib\npathlib.Path('/tmp/plant-loaded').write_text('by hand')\n"
    planted_at_grading, control = await asyncio.gather(
        grade_fastapi(backend, image, PLANTED_EVERYWHERE),
        grade_fastapi(backend, image, marker_by_hand + PLANTED_EVERYWHERE),
    )
    assert_zero(planted_at_grading, tampered=False)
    assert control.score == 1.0, control.reason  # the construction works: a loaded plant would show
    row = FASTAPI.compile_task(FASTAPI_TASKS / TASK)
    writes = "\n".join(f"cat > /workspace/{name} <<'EOF'\n{text}EOF" for name, text in AUTOLOADED.items())
    command = f"{writes}\ncat > /workspace/app.py <<'EOF'\n{BROKEN_APP}EOF\n"
    run = await scripted_rollout(backend, image, row, [{"tool": "bash", "args": {"command": command}}])
    assert_zero(run.grade, tampered=False)


# The container's pid 1 holds the host's stream to the agent: unterminated junk written there would
# glue itself to the agent's next reply, and forged reply lines would pose as answers. Before, either
# turned a grade into a scoring error at the submission's will.
JUNK_INTO_THE_AGENT_STREAM = (
    REFERENCE
    + """
import json as _json
import os as _os

for _fd in ("/proc/1/fd/1", "/proc/1/fd/2"):
    try:
        _out = _os.open(_fd, _os.O_WRONLY | _os.O_NONBLOCK)
        for _rid in range(1, 50):
            _os.write(_out, (_json.dumps({"id": _rid, "stdout": "", "stderr": "", "exit_code": 0,
                                          "timed_out": False, "truncated": 0}) + "\\n").encode())
        _os.write(_out, b'{"id": 1, "unterminated junk')
        _os.close(_out)
    except OSError:
        pass
"""
)


async def test_junk_and_forged_replies_in_the_agents_stream_change_nothing(backend, image):
    g = await grade_fastapi(backend, image, JUNK_INTO_THE_AGENT_STREAM)
    assert g.score == 1.0 and not g.tampered and g.scoring_error is None, g.reason
