"""An app whose answers would swell the HTTP driver's report past what comes back scores its own 0.0.

The agent sends back about 15 MiB of a grader program's output, and a report cut there has no
readable final frame: a harness fault, rescheduled. Each response body is capped (256 KiB), but
a body of control characters is six times that as JSON, and again larger inside the agent's reply:
a dozen such answers used to make every grading of a wrong app a harness fault. The driver now
spends at most REPORT_BUDGET of its report on responses (runtime/grader/http_driver.py); past it a
response keeps its status alone, and the checks that read its body fail.
"""

from __future__ import annotations

import pytest
from attack_kit import FASTAPI_TASKS, assert_zero

from sandbox_env.families.fastapi import FAMILY
from sandbox_env.grading.grader import Grader

pytestmark = pytest.mark.docker

TASK = "fastapi_patch_partial"  # 11 requests and the canaries: well past the reply's size at 1.5 MiB each

BLOATED = """
from fastapi import FastAPI, Response

app = FastAPI()
JUNK = chr(1) * (256 * 1024)


@app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def everything(path: str):
    return Response(JUNK, media_type="text/plain")
"""


async def test_an_app_answering_with_bodies_of_escaped_characters_scores_its_own_zero(backend, image):
    row = FAMILY.compile_task(FASTAPI_TASKS / TASK)
    grade = await FAMILY.grade({"files": {"app.py": BLOATED}}, row, Grader(backend, image, 150))
    assert_zero(grade)
