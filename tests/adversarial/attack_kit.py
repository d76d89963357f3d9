"""Pieces of app.py that exploits share, written against the graders' own source.

Most fastapi exploits here serve a broken app (no routes: 404 everywhere) and try to
make the grader record the answers of a correct one, an "oracle" (the task's reference,
hidden in the module under another name). Had any of them reached the recorder, the
grade would be 1.0; every one must come out 0.0.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sandbox_env.families.fastapi import FAMILY as FASTAPI
from sandbox_env.grading.grader import Grader

ROOT = Path(__file__).resolve().parents[2]
FASTAPI_TASKS = ROOT / "sandbox_env" / "tasks" / "fastapi"
TASK = "fastapi_status_204"
REFERENCE = (FASTAPI_TASKS / TASK / "reference.py").read_text()

BROKEN_APP = "from fastapi import FastAPI\n\napp = FastAPI()\n"

# The correct app, under another name, with an in-process client that answers like it.
ORACLE = f"""
import types as _types

_oracle = _types.ModuleType("_oracle")
exec(compile({REFERENCE!r}, "<oracle>", "exec"), _oracle.__dict__)

from fastapi.testclient import TestClient as _OracleClient

_oracle_client = _OracleClient(_oracle.app)


def _oracle_answer(req):
    kw = {{}}
    if req.get("query"):
        kw["params"] = [tuple(p) for p in req["query"]]
    if "json" in req:
        kw["json"] = req["json"]
    r = _oracle_client.request(req["method"], req["path"], **kw)
    return {{"status": r.status_code, "headers": [[k.decode().lower(), v.decode()] for k, v in r.headers.raw],
            "text": r.text, "truncated": False, "app_calls": 1, "app_status": r.status_code}}
"""

# Every way this process has to find the run's nonce and request: its own heap (gc: where the
# old in-process driver kept its Channel and its request), and the memory of every other
# process of the container (/proc/PID/mem: the agent and the driver read the request line,
# nonce included). For each find, a framed report with the oracle's answers to the found
# requests is written to every descriptor the app can reach: its own, and /proc/PID/fd/N of
# every process (a pipe reopened there writes into the same pipe). Needs ORACLE.
FORGERY = r"""
import gc as _gc
import json as _json
import os as _os
import re as _re

_LINE = _re.compile(rb'\{"sessions": [^\n]*?"nonce": "[0-9a-f]{32}"\}')


def _finds():
    found = []
    for obj in _gc.get_objects():
        nonce = obj.get("nonce") if isinstance(obj, dict) else getattr(obj, "_nonce", None)
        if isinstance(nonce, bytes):
            nonce = nonce.decode("latin-1")
        if isinstance(nonce, str) and _re.fullmatch("[0-9a-f]{32}", nonce):
            found.append((nonce, None))
        if isinstance(obj, dict) and isinstance(obj.get("sessions"), list) and "request_timeout" in obj:
            found.append((None, obj))
    for pid in _os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == _os.getpid():
            continue
        try:
            maps = open(f"/proc/{pid}/maps").read().splitlines()
            mem = open(f"/proc/{pid}/mem", "rb")
        except OSError:
            continue
        with mem:
            for line in maps:
                span, perms = line.split()[:2]
                lo, hi = (int(x, 16) for x in span.split("-"))
                if "r" not in perms or hi - lo > 64 << 20:
                    continue
                try:
                    mem.seek(lo)
                    chunk = mem.read(hi - lo)
                except (OSError, ValueError, OverflowError):
                    continue
                for raw in _LINE.findall(chunk):
                    try:
                        req = _json.loads(raw)
                        found.append((req["nonce"], req))
                    except ValueError:
                        pass
    return found


def _report_for(req):
    sessions = (req or {}).get("sessions") or []
    return {"stage": "done", "imported": True, "has_app": True, "import_error": None, "stalled": None,
            "cross_check": [], "integrity": [],
            "sessions": [{"error": None, "responses": [_oracle_answer(r) for r in s]} for s in sessions]}


def _forge_everywhere():
    finds = _finds()
    requests = [r for _, r in finds if r]
    report = _report_for(requests[0] if requests else None)
    targets = []
    for pid in _os.listdir("/proc"):
        if pid.isdigit():
            try:
                targets += [f"/proc/{pid}/fd/{fd}" for fd in _os.listdir(f"/proc/{pid}/fd")]
            except OSError:
                pass
    for nonce in {n for n, _ in finds if n} | {"0" * 32}:
        frame = ("\n" + nonce + "\n" + _json.dumps(report) + "\n" + nonce + "\n").encode()
        for fd in range(0, 64):
            try:
                _os.write(fd, frame)
            except OSError:
                pass
        for path in targets:
            try:
                fd = _os.open(path, _os.O_WRONLY | _os.O_NONBLOCK)
                _os.write(fd, frame)
                _os.close(fd)
            except OSError:
                pass
    return finds
"""

# The pids of the grader's processes, found by their command lines.
GRADER_PIDS = """
def _grader_pids():
    out = {}
    for pid in _os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode()
            except OSError:
                continue
            for name in ("http_driver.py", "app_host.py", "agent.py"):
                if name in cmd:
                    out.setdefault(name, []).append(int(pid))
    return out
"""


async def grade_fastapi(backend, image, source: str, timeout: float = 150, task: str = TASK, **grading):
    row = FASTAPI.compile_task(FASTAPI_TASKS / task)
    if grading:
        row = dataclasses.replace(row, grading={**row.grading, **grading})
    return await FASTAPI.grade({"files": {"app.py": source}}, row, Grader(backend, image, timeout))


def assert_zero(grade, *, tampered: bool | None = None) -> None:
    """A zero that is the submission's: no scoring error; tampered as told (None: either)."""
    assert grade.score == 0.0, grade.reason
    assert grade.scoring_error is None, grade.reason
    if tampered is not None:
        assert grade.tampered is tampered, grade.reason
        assert grade.metrics.get("tampered") == float(tampered), grade.metrics


def refused_at_import(kit: str, name: str, target: str, call: str) -> str:
    """An app that, at import, makes one call against a judge of its (`call` on `_target`, which `target` finds,
    both in terms of `kit`); a refusal (OSError) ends its import with a PermissionError naming the attempt."""
    return (
        kit
        + f"""
_target = {target}
try:
    {call}
except OSError as _exc:
    raise PermissionError({name!r} + " refused: " + str(_exc)) from None
"""
    )
