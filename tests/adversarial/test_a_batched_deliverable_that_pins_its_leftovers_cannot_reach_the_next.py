"""A deliverable in a verification batch that makes its leftovers impossible to remove cannot reach the next job.

verify/batched.py grades several deliverables of one task in one driver run, and the driver removes what
each job left in /workspace and /tmp before the next (http_driver.clear_leftovers). A deliverable that has
read that code would leave a folder the sandbox user cannot empty (its mode drops the write bit), so that
the removal fails and the next job finds its files. The driver must then stop the batch, and every later job
must be graded alone in a fresh sandbox: the next deliverable's verdict is the one it gets alone.
"""

from __future__ import annotations

import pytest

from sandbox_env.families import grade_final
from sandbox_env.families.fastapi import APP_PATH
from sandbox_env.generate import api_store

pytestmark = pytest.mark.docker

PINS_ITS_LEFTOVERS = """\
import os
os.makedirs("/tmp/pinned/inner", exist_ok=True)
open("/tmp/pinned/inner/marker", "w").write("x")
os.chmod("/tmp/pinned/inner", 0o500)
os.chmod("/tmp/pinned", 0o500)
from fastapi import FastAPI
app = FastAPI()
"""

# defines `app` only when the pinned folder is out of sight: graded alone, it serves
SEES_THE_PINNED_FOLDER = """\
import os
if not os.path.exists("/tmp/pinned"):
    from fastapi import FastAPI
    app = FastAPI()
"""


async def test_a_deliverable_whose_leftovers_cannot_be_removed_changes_nothing_for_the_next(backend, image):
    from sandbox_env.grading.grader import Grader
    from sandbox_env.verify.batched import grade_batch

    row = api_store.compile_generated_fastapi(api_store.read(api_store.GENERATED_FASTAPI_FILE)[0])
    grader = Grader(backend, image)
    alone = await grade_final(row, {"files": {APP_PATH: SEES_THE_PINNED_FOLDER}}, grader)
    first, after = await grade_batch(row, [PINS_ITS_LEFTOVERS, SEES_THE_PINNED_FOLDER], grader)
    assert "no module-level `app`" not in alone.reason, alone.reason
    assert "no module-level `app`" not in after.reason, after.reason
    assert (after.score, [c["passed"] for c in after.checks]) == (alone.score, [c["passed"] for c in alone.checks])
    assert first.score < 1.0 and not first.scoring_error
