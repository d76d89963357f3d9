"""A replayed answer key: an app that answers from a table of a previous grading scores (near) nothing.

The attack, as a policy that has read the repository (or met the task in an earlier epoch)
would build it: grade the task's reference once through the real path, record every request
the driver sent and the response it got, and serve them back from a table, with no store and
no logic: a request is looked up by method, path, query, JSON body and the requests that hit
the table before it in the same app process (so the same GET answers differently after a
PATCH, as the recorded one did); the headers it was sent with must be present, and of two
recorded answers the one recorded with more of them wins (a request with a token and one
without are different requests, whatever order the grading sent them in). Unknown
requests get a plain 404 (so the canaries come out as an honest app's).

With the checks' [[vary]] tokens turned off (the checks as they were before values were
drawn), the replay scores 1.0 on a fresh grading: the attack is faithful. With the draws,
every check that sends a drawn value fails, and the replay scores at most the share of
checks that carry none (spec-fixed reads such as the OpenAPI document); the reference
scores 1.0 on every draw.

Before values were drawn the replay scored 1.0 on every one of these tasks (6/6 on
fastapi_patch_partial); the `before` grading here reproduces that.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json

import pytest
from attack_kit import FASTAPI_TASKS, REFERENCE

from sandbox_env.families.fastapi import FAMILY
from sandbox_env.families.fastapi_vary import substitute
from sandbox_env.grading.grader import Grader

pytestmark = pytest.mark.docker

# every task whose checks declare [[vary]] tokens
COVERED = sorted(
    f.name for f in FASTAPI_TASKS.iterdir() if (f / "task.toml").is_file() and "[[vary]]" in (f / "task.toml").read_text()
)
# tasks this replay cannot play faithfully even on fixed checks (its table is keyed on JSON
# bodies, and a request it does not know gets the plain 404): form bodies (a drawn value sent
# in a form is invisible to its table, so it replays the recorded answer), an app's own 404s,
# an app that refuses unknown paths itself (the harbour's gate answers them 403)
UNFAITHFUL = {
    "fastapi_form_login",
    "fastapi_oauth2_password",
    "fastapi_handler_overrides",
    "composed_greenhouse_keepers",
    "composed_bakery_shift",
    "composed_harbour_pass",
    "composed_workshop_tools",
}
COVERED = [t for t in COVERED if t not in UNFAITHFUL]
SAMPLE_EVERY = 4  # the default run replays every fourth covered task (hand-written and composed); the slow tier the rest
COVERED_PARAMS = [t if i % SAMPLE_EVERY == 0 else pytest.param(t, marks=pytest.mark.slow) for i, t in enumerate(COVERED)]
SKIP_HEADERS = {"content-length", "date", "server", "transfer-encoding"}

REPLAY_APP = """
import base64
import json

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

TABLE = json.loads(TABLE_JSON)
HISTORY = []
app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)


def body_key(raw):
    try:
        return json.dumps(json.loads(raw), sort_keys=True) if raw else None
    except ValueError:
        return None


@app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
async def replay(request: Request, path: str):
    query = sorted([k, v] for k, v in request.query_params.multi_items())
    key = json.dumps([request.method, request.url.path, query, body_key(await request.body())])
    # the most specific recorded answer first: one recorded with the headers this request carries
    for entry in sorted(TABLE.get(json.dumps([key, HISTORY]), []), key=lambda e: -len(e["sent"])):
        if all(any(v in got for got in request.headers.getlist(k)) for k, v in entry["sent"]):
            if entry["remember"]:
                HISTORY.append(key)
            resp = Response(base64.b64decode(entry["b64"]), status_code=entry["status"])
            for k, v in entry["headers"]:
                resp.headers.append(k, v)
            return resp
    return JSONResponse({"detail": "Not Found"}, status_code=404)
"""


class Recorder:
    """A Grader that keeps what each run sent and what came back."""

    def __init__(self, grader: Grader) -> None:
        self.grader, self.timeout, self.runs = grader, grader.timeout, []

    async def run_program(self, name, request, files, timeout=None):
        result, report = await self.grader.run_program(name, request, files, timeout=timeout)
        self.runs.append((request, report))
        return result, report


def _body(resp: dict) -> bytes:
    return resp["text"].encode() if "text" in resp else base64.b64decode(resp.get("b64", ""))


def _json_text(raw: str | None) -> str | None:
    """A raw body as the replay app keys it: canonical JSON, or None."""
    try:
        return json.dumps(json.loads(raw), sort_keys=True) if raw else None
    except ValueError:
        return None


def _remember(req: dict, resp: dict, openapi_url: str) -> bool:
    """The requests the replay counts as history: not the document, not an unknown path."""
    not_found = resp["status"] == 404 and _body(resp) == b'{"detail":"Not Found"}'
    return not (req["method"] == "GET" and req["path"] == openapi_url) and not not_found


def answer_key(runs: list, openapi_url: str) -> dict:
    table: dict[str, list] = {}
    for request, report in runs:
        for reqs, session in zip(request["sessions"], report["sessions"], strict=True):
            history: list[str] = []
            for req, resp in zip(reqs, session["responses"], strict=False):
                if "error" in resp:
                    continue
                query = sorted(list(p) for p in req.get("query", []))
                body = json.dumps(req["json"], sort_keys=True) if "json" in req else _json_text(req.get("content"))
                key = json.dumps([req["method"], req["path"], query, body])
                remember = _remember(req, resp, openapi_url)
                table.setdefault(json.dumps([key, history]), []).append(
                    {
                        "sent": [[k.lower(), v] for k, v in req.get("headers", [])],
                        "remember": remember,
                        "status": resp["status"],
                        "headers": [[k, v] for k, v in resp["headers"] if k.lower() not in SKIP_HEADERS],
                        "b64": base64.b64encode(_body(resp)).decode(),
                    }
                )
                if remember:
                    history = [*history, key]
    return table


def replay_app(table: dict) -> str:
    return REPLAY_APP.replace("TABLE_JSON", repr(json.dumps(table)))


async def grade(backend, image, row, source, grader=None):
    return await FAMILY.grade({"files": {"app.py": source}}, row, grader or Grader(backend, image, 150))


async def replay_scores(backend, image, row) -> tuple[float, object]:
    """The replay's score on a fresh grading, after recording one grading of the reference."""
    reference = (FASTAPI_TASKS / row.task_id / "reference.py").read_text()
    recorder = Recorder(Grader(backend, image, 150))
    recorded = await grade(backend, image, row, reference, recorder)
    assert recorded.score == 1.0, recorded.reason
    replay = await grade(backend, image, row, replay_app(answer_key(recorder.runs, row.grading["openapi_url"])))
    assert replay.scoring_error is None, replay.reason
    return replay.score, replay


async def replay_with_and_without_draws(backend, image, task_id: str):
    """The task's row, and the replay's score and grading with this grading's draws, once the replay has
    scored 1.0 on the checks as written (the draws turned off): the attack is faithful."""
    row = FAMILY.compile_task(FASTAPI_TASKS / task_id)
    assert row.grading["vary"], f"{task_id} declares no [[vary]] tokens"
    fixed = dataclasses.replace(row, grading={**row.grading, "vary": []})
    (before, _), (after, replay) = await asyncio.gather(replay_scores(backend, image, fixed), replay_scores(backend, image, row))
    print(f"{task_id}: replay with the checks as written {before:.3f}, with this grading's draws {after:.3f}")
    assert before == 1.0, f"the replay is not faithful on the checks as written: {before}"
    return row, after, replay


async def assert_the_reference_scores_one(backend, image, row, draws: int) -> None:
    """The task's reference scores 1.0 on each of `draws` gradings (each draws its own values)."""
    reference = (FASTAPI_TASKS / row.task_id / "reference.py").read_text()
    refs = await asyncio.gather(*(grade(backend, image, row, reference) for _ in range(draws)))
    assert all(g.score == 1.0 for g in refs), [g.reason for g in refs]


@pytest.mark.parametrize("task_id", COVERED_PARAMS)
async def test_a_replayed_answer_key_fails_every_check_that_sends_a_drawn_value(backend, image, task_id):
    row, after, replay = await replay_with_and_without_draws(backend, image, task_id)
    # a check carries a drawn value when substituting changes it; those must all fail
    probe = {str(d["token"]): 10**6 if d["kind"] != "word" else "Zqzq" for d in row.grading["vary"]}
    moved = substitute(row.grading["checks"], row.grading["vary"], probe)
    carries = {c["name"] for c, m in zip(row.grading["checks"], moved, strict=True) if c != m}
    passed = {c["name"] for c in replay.checks if c["passed"]}
    assert not passed & carries, f"the replay passed checks with drawn values: {passed & carries}"
    assert after <= 1 - len(carries) / len(row.grading["checks"]) + 1e-9, replay.reason
    await assert_the_reference_scores_one(backend, image, row, draws=3)


def test_the_tasks_named_in_the_issue_are_covered():
    assert REFERENCE == (FASTAPI_TASKS / "fastapi_status_204" / "reference.py").read_text()
    named = {"fastapi_patch_partial", "fastapi_status_204", "fastapi_bigger_app", "fastapi_pydantic_body"}
    named |= {"fastapi_nested_models", "fastapi_multiple_bodies", "fastapi_body_embed", "fastapi_query_list"}
    named |= {"fastapi_cookies", "fastapi_headers_convert"}
    assert named <= set(COVERED)
