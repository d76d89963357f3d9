"""Answers built so that reading them on the host raises: each must be the submission's 0.0.

grade_final turns any exception of a family's grade into a harness fault (scoring_error,
then `state["error"]`: the rollout is rescheduled, not scored). So every value that
reaches the host from code under test must be read by code that cannot raise on it, or a
wrong answer becomes a fault at the model's will. Each case here did raise before:

- orm: an int too large for a float in `result` (OverflowError in the row comparison), which
  the grade's evidence rows then carried into the state, where msgpack refuses ints past 64 bits;
- fastapi: a response body of JSON nested past the parser's recursion limit (RecursionError),
  and an SSE `retry:` field of digits that `int()` refuses ('²', or more than 4300 of them);
- django: a report forged on the runner's channel (the nonce is in the process's memory)
  that is no JSON, nests too deep, has a stage the host does not know, or has fields of the
  wrong type; before, each was a scoring_error ("unexpected runner report stage", a
  ReportError, an AttributeError).

And a grade is saved and sent on (msgpack, JSON as UTF-8): a lone surrogate in an error
message of the code under test (JSON escapes carry it through a grader's report) reached
the grade's reason, which then could not be encoded: the rollout's result could not be sent.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from attack_kit import FASTAPI_TASKS, assert_zero

from sandbox_env.families import grade_final
from sandbox_env.families.django import FAMILY as DJANGO
from sandbox_env.families.orm import FAMILY as ORM
from sandbox_env.families.orm_compare import compare
from sandbox_env.grading.grader import Grader
from sandbox_env.verify.django import VERIFIER
from sandbox_env.verify.scripted import scripted_rollout

ROOT = Path(__file__).resolve().parents[2]
ORM_TASK = ROOT / "sandbox_env" / "tasks" / "orm" / "orm_agg_08"  # columns str, int, int, float
DJANGO_TASKS = ROOT / "sandbox_env" / "tasks" / "django"

HUGE = 10**400  # prints as 401 digits (under the 4300 of int <-> str) but no float holds it


def test_an_integer_too_large_for_a_float_is_compared_not_raised():
    expected = [["a", 1, 2, 1.5], ["b", 3, 4, 2.5]]
    for got in (
        [("a", 1, 2, HUGE), ("b", 3, 4, 2.5)],  # against a float: math.isclose overflowed
        [("b", 3, 4, 2.5), ("a", HUGE, 2, 1.5)],  # the multiset explanation: float() overflowed
        [("a", 1, 2, -HUGE)],
    ):
        tagged = {"list": [{"tuple": list(row)} for row in got]}
        outcome = compare(tagged, expected)
        assert not outcome.passed and not outcome.malformed, outcome.reason


@pytest.mark.docker
async def test_an_orm_result_holding_huge_integers_is_the_submissions_zero(backend, image):
    task = ORM.compile_task(ORM_TASK)
    code = (ORM_TASK / "reference.py").read_text() + f"\nresult[0] = tuple({HUGE} for _ in result[0])\n"
    run = await scripted_rollout(backend, image, task, [{"tool": "execute_code", "args": {"code": code}}])
    assert_zero(run.grade, tampered=False)
    received = run.grade.to_dict()["checks"][-1]["rows"]["received"][0]
    assert received == [str(HUGE)] * len(received), received  # msgpack carries no int past 64 bits


# An app that answers every request with `body` (status 200, the given media type).
EVERY_ANSWER = """
from fastapi import FastAPI
from starlette.responses import Response

app = FastAPI()


@app.middleware("http")
async def _answer(request, call_next):
    return Response({body!r}, status_code=200, media_type={media!r})
"""

FASTAPI_CASES = [
    # (idea, task, body, media type)
    ("JSON nested 100000 deep", "fastapi_status_204", "[" * 100_000 + "]" * 100_000, "application/json"),
    ("JSON nested just under the parser's limit", "fastapi_status_204", "[" * 990 + "]" * 990, "application/json"),
    ("an SSE retry of a superscript digit", "fastapi_sse_basic", "retry: \u00b2\ndata: {}\n\n", "text/event-stream"),
    ("an SSE retry of 5000 digits", "fastapi_sse_basic", "retry: " + "9" * 5000 + "\ndata: {}\n\n", "text/event-stream"),
]


@pytest.mark.docker
async def test_fastapi_bodies_the_host_cannot_parse_are_the_submissions_zero(backend, image):
    from sandbox_env.families.fastapi import FAMILY as FASTAPI

    grader = Grader(backend, image, 150)
    sem = asyncio.Semaphore(2)

    async def one(task: str, body: str, media: str):
        async with sem:
            row = FASTAPI.compile_task(FASTAPI_TASKS / task)
            final = {"files": {"app.py": EVERY_ANSWER.format(body=body, media=media)}}
            return await grade_final(row, final, grader)

    grades = await asyncio.gather(*(one(t, b, m) for _, t, b, m in FASTAPI_CASES))
    for (idea, *_), grade in zip(FASTAPI_CASES, grades, strict=True):
        assert grade.score == 0.0 and grade.scoring_error is None, (idea, grade.reason)


DJ01_JUNK = VERIFIER.solution_files(DJANGO_TASKS / "dj01", "junk")["shop/querysets.py"]

# A report written on the runner's channel (found with gc), framed with its nonce, then os._exit.
FORGE = """
import gc as _gc
import os as _os

_channel = next(o for o in _gc.get_objects() if type(o).__name__ == "Channel")
_body = {body}
_os.write(_channel._fd, b"\\n" + _channel._nonce + b"\\n" + _body + b"\\n" + _channel._nonce + b"\\n")
_os._exit(0)
"""

_FINISHED = {"stage": "finished", "exit_code": 0, "collection_done": True, "integrity": {"armed": 1, "problems": []}}
FORGED_REPORTS = {
    "no JSON": b"{this is not json",
    "a JSON array": b"[1, 2]",
    "JSON nested 100000 deep": b"[" * 100_000 + b"]" * 100_000,
    "JSON nested 900 deep": b'{"stage": ' + b"[" * 900 + b"]" * 900 + b"}",
    "an unknown stage": json.dumps({"stage": "interrupted by the host"}).encode(),
    "outcomes that are a number": json.dumps({**_FINISHED, "outcomes": 5}).encode(),
    "a crash that is a number": json.dumps({**_FINISHED, "exit_code": 3, "crash": 7, "outcomes": {}}).encode(),
    "collected ids that are objects": json.dumps({**_FINISHED, "outcomes": {}, "collected": [{}]}).encode(),
    "failures that are numbers": json.dumps({**_FINISHED, "outcomes": {"x": "failed"}, "failures": {"x": 1}}).encode(),
}
# Made in the process (a deliverable is at most 512 KiB). Each real test is looked up in the outcomes:
# before, a million of them cost the host 6 s of CPU per grading, in its event loop.
MANY_OUTCOMES = (
    f'__import__("json").dumps({{**{_FINISHED!r}, "outcomes": {{f"tests/t{{i}}": "passed" for i in range(50_000)}}}}).encode()'
)


@pytest.mark.docker
async def test_django_reports_forged_so_that_the_host_cannot_read_them_are_tampering(backend, image):
    grader = Grader(backend, image)
    task = DJANGO.compile_task(DJANGO_TASKS / "dj01")
    sem = asyncio.Semaphore(2)

    async def one(body: str):
        async with sem:
            final = {"files": {"shop/querysets.py": FORGE.format(body=body) + DJ01_JUNK}}
            return await grade_final(task, final, grader)

    bodies = {name: repr(body) for name, body in FORGED_REPORTS.items()} | {"50000 outcomes": MANY_OUTCOMES}
    names = sorted(bodies)
    grades = await asyncio.gather(*(one(bodies[n]) for n in names))
    for name, grade in zip(names, grades, strict=True):
        assert grade.score == 0.0 and grade.scoring_error is None, (name, grade.reason)
        assert grade.tampered and grade.metrics["tampered"] == 1.0, (name, grade.reason)


# Error texts of the code under test holding a lone surrogate, which JSON escapes carry through a report.
SURROGATE_ERRORS = [
    ("fastapi", "fastapi_status_204", {"app.py": 'raise RuntimeError("bad \\udc80 text")\n'}),
    ("django", "dj01", {"shop/querysets.py": 'raise RuntimeError("bad \\udc80 text")\n'}),
]


@pytest.mark.docker
async def test_a_grade_is_valid_text_whatever_the_code_under_test_printed(backend, image):
    from sandbox_env.families.fastapi import FAMILY as FASTAPI

    grader = Grader(backend, image, 150)
    families = {"fastapi": (FASTAPI, FASTAPI_TASKS), "django": (DJANGO, DJANGO_TASKS)}

    async def one(family: str, task: str, files: dict[str, str]):
        fam, root = families[family]
        return await grade_final(fam.compile_task(root / task), {"files": files}, grader)

    grades = await asyncio.gather(*(one(*case) for case in SURROGATE_ERRORS))
    for (family, *_), grade in zip(SURROGATE_ERRORS, grades, strict=True):
        assert_zero(grade, tampered=False)
        assert "bad \ufffd text" in grade.reason, (family, grade.reason)
        json.dumps(grade.to_dict(), ensure_ascii=False).encode("utf-8")  # raised UnicodeEncodeError before
