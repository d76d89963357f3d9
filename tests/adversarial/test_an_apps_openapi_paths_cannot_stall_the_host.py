"""An app's OpenAPI document is read on the host: its path templates must not stall it.

judge_canaries matches each unknown-path canary against every path template of the app's
document. Before, a template of adjacent parameters (`/{a}{b}{c}{d}{e}{f}{g}/...!`) became
`[^/]+` seven times in a row, which backtracks exponentially on a canary segment: a few
milliseconds of the host's event loop per template, so a 256 KiB document of them blocked
grading (every rollout of the worker) for tens of seconds. Measured in CPU time, as a
ratio against a document of as many plain templates.
"""

from __future__ import annotations

import json
import random
import time

from sandbox_env.families.fastapi_checks import judge_canaries, make_canaries

TEMPLATES = 200


def _hostile(i: int) -> str:
    params = "".join(f"{{a{i}_{k}}}" for k in range(7))
    return f"/{params}/{params.replace('{a', '{b')}!{i}"


def _judge_with(paths: list[str]) -> float:
    """CPU seconds of judging one run's canaries whose openapi answer lists `paths`."""
    canaries = make_canaries(random.Random(7))
    doc = json.dumps({"openapi": "3.1.0", "paths": {p: {} for p in paths}})
    responses = []
    for c in canaries:
        text = doc if c["kind"] == "openapi" else "{}"
        responses.append({"status": 200, "headers": [], "text": text, "app_calls": 1, "app_status": 404})
    start = time.process_time()
    for _ in range(5):
        problems = judge_canaries(canaries, responses, "/openapi.json", [])
    spent = time.process_time() - start
    assert any("unknown path" in p for p in problems), problems  # the templates matched nothing
    return spent


def test_path_templates_of_adjacent_parameters_cost_what_plain_ones_cost():
    plain = _judge_with([f"/items{i}/{{item_id}}/x" for i in range(TEMPLATES)])
    hostile = _judge_with([_hostile(i) for i in range(TEMPLATES)])
    assert hostile < 20 * max(plain, 0.002), (hostile, plain)
