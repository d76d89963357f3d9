"""Exploits of the orm family's final read, written against session.py and orm_compare.py.

The final `result` is read by a probe whose encoder runs in the model's own session, so a
cell can replace it, or write on the session's reply pipe. Before, {"list": 5} made the
host's decoder raise and the rollout came out as a harness fault (scoring_error) at the
model's will. Every malformed answer must now be the submission's 0.0, never a scoring_error.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sandbox_env.families.orm import FAMILY
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
TASK_DIR = sorted(p for p in (ROOT / "sandbox_env" / "tasks" / "orm").iterdir() if (p / "task.toml").is_file())[0]

PATCH_ENCODER = """
import sys
sys.modules["__main__"].encode = lambda value, budget: {encoded}
result = [(1,)]
"""

# The exploit, and other shapes the grammar does not allow.
MALFORMED = {
    "a list tag holding a number": '{"list": 5}',
    "a row that is a bare array": '{"list": [[1, 2]]}',
    "an unknown tag": '{"set": [1]}',
    "a tag with two keys": '{"list": [], "tuple": []}',
    "infinity": '{"list": [{"tuple": [float("inf")]}]}',
    "nesting 300 levels deep": '__import__("functools").reduce(lambda acc, _: {"list": [acc]}, range(300), 1)',
}

# A cell that makes the probe write a junk line before its reply: the agent reads junk as the reply.
JUNK_ON_THE_REPLY_PIPE = """
import gc, os, sys
_session = next(o for o in gc.get_objects() if type(o).__name__ == "Session" and hasattr(o, "proto_out"))
_real_probe = _session.probe


def _junk_then_probe(name):
    _session.proto_out.write(b"this is not JSON\\n")
    _session.proto_out.flush()
    return _real_probe(name)


_session.probe = _junk_then_probe
result = [(1,)]
"""

# A probe reply without a value, and one whose value holds an integer JSON parsers refuse.
NO_VALUE = """
import gc
_session = next(o for o in gc.get_objects() if type(o).__name__ == "Session" and hasattr(o, "proto_out"))
_session.probe = lambda name: {"output": "nothing to see"}
result = [(1,)]
"""
HUGE_INTEGER = """
import gc
_session = next(o for o in gc.get_objects() if type(o).__name__ == "Session" and hasattr(o, "proto_out"))


def _huge(name):
    _session.proto_out.write(b'{"value": {"list": [{"tuple": [' + b"9" * 6000 + b']}]}}\\n')
    _session.proto_out.flush()
    return {"value": None}


_session.probe = _huge
result = [(1,)]
"""


async def _play(backend, image, code: str):
    task = FAMILY.compile_task(TASK_DIR)
    run = await scripted_rollout(backend, image, task, [{"tool": "execute_code", "args": {"code": code}}])
    return run.grade


async def test_a_patched_probe_encoder_is_the_submissions_zero_as_tampering(backend, image):
    names = sorted(MALFORMED)
    grades = await asyncio.gather(*(_play(backend, image, PATCH_ENCODER.format(encoded=MALFORMED[n])) for n in names))
    for name, g in zip(names, grades, strict=True):
        assert g.score == 0.0 and g.scoring_error is None, (name, g.reason)
        if "could not be read from the session" in g.reason:
            continue  # too deep for the agent to relay: the session's failure, stopped before the host (agent.py)
        assert g.tampered and g.metrics["tampered"] == 1.0, (name, g.reason)
        assert "malformed" in g.reason, (name, g.reason)


async def test_junk_or_no_value_on_the_probes_reply_is_the_submissions_zero(backend, image):
    grades = await asyncio.gather(*(_play(backend, image, code) for code in (JUNK_ON_THE_REPLY_PIPE, NO_VALUE, HUGE_INTEGER)))
    for g in grades:
        assert g.score == 0.0 and g.scoring_error is None, g.reason


# A package planted in /workspace under the name the session's preamble imports, one that never
# finishes importing, then the session ended: before, its restart imported the planted `django` and
# outlasted the host's deadline for the call, and an idle sandbox's silent agent is a harness fault:
# any rollout voided (rescheduled) at the model's will.
PLANT_DJANGO_THEN_END_THE_SESSION = [
    {"tool": "bash", "args": {"command": "mkdir -p django && printf 'import time\\ntime.sleep(10**6)\\n' > django/__init__.py"}},
    {"tool": "execute_code", "args": {"code": "import os; os._exit(0)"}},
]


async def test_a_module_planted_under_a_name_the_preamble_imports_cannot_hold_up_a_restart(backend, image):
    task = FAMILY.compile_task(TASK_DIR)
    answer = {"tool": "execute_code", "args": {"code": (TASK_DIR / "reference.py").read_text()}}
    run = await scripted_rollout(backend, image, task, [*PLANT_DJANGO_THEN_END_THE_SESSION, answer])
    assert "restarted" in run.outputs[1], run.outputs[1]
    assert run.grade.score == 1.0 and run.grade.scoring_error is None, run.grade.reason
