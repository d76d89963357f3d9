"""A lookup table of recorded responses scores below 1.0 on the tasks that once had a fixed answer key.

The attack: grade the task's reference once through the real path, record every request the
driver sent and the response it got, and serve them back from a table keyed by method, path,
query and JSON body (the replay app of test_fastapi_a_replayed_answer_key_scores_nothing.py,
reused here). Before these tasks drew values, the table scored 1.0 on every one of them (4/4 on
fastapi_common_dependencies); now each check that gives back what it sends also sends a drawn
value (`fastapi_vary.require_drawn_echoes`), so the table meets requests it never recorded.

For each task: the replay scores 1.0 on the checks as written (with the draws turned off), so the
attack is faithful; with the draws it scores below 1.0; the reference scores 1.0 on each draw.
Left out: fastapi_oauth2_password (its drawn values are sent in forms, which the table does not
key on) and the three tasks that draw nothing because no request sends a value (fastapi_custom_openapi,
fastapi_exclude_unset, fastapi_yield_teardown: their answers are fixed by the spec).
"""

from __future__ import annotations

import pytest
from test_fastapi_a_replayed_answer_key_scores_nothing import assert_the_reference_scores_one, replay_with_and_without_draws

pytestmark = pytest.mark.docker

FORMERLY_FIXED = [
    "fastapi_common_dependencies",
    "fastapi_dependency_cache",
    "fastapi_enum_path",
    "fastapi_http_middleware",
    "fastapi_lifespan",
    "fastapi_mounted_subapp",
    "fastapi_query_defaults",
    "fastapi_sse_basic",
    "fastapi_sse_events",
]


@pytest.mark.parametrize("task_id", FORMERLY_FIXED)
async def test_a_lookup_table_of_recorded_responses_scores_below_one(backend, image, task_id):
    row, after, replay = await replay_with_and_without_draws(backend, image, task_id)
    assert after < 1.0, replay.reason
    await assert_the_reference_scores_one(backend, image, row, draws=2)
