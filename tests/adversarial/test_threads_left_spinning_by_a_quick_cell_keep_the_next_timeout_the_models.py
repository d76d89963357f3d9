"""Threads left spinning by a quick cell keep the next call's timeout the model's, never "starved".

Threat: the agent's clock takes its first sample of the sandbox's processes only 50 ms into a
call (runtime/container/agent.py), so a call that ends sooner is never sampled. A policy that read this
starts busy threads in the persistent Python session from a cell that returns at once, then
makes a slow call: the session's own threads take the sandbox's CPU, and if the clock saw the
call as waiting for a CPU it could not get, the call would run to its wall-clock backstop and
end as `SandboxStarved`, a harness fault the trainer reschedules instead of the model's
timeout. The clock counts the sandbox's own processes' time as active whoever started them and
whenever, so the slow call ends at its limit as the model's timeout.
"""

from __future__ import annotations

import pytest

from sandbox_env.rollout.tools import run_code

pytestmark = pytest.mark.docker

WIDE = 60.0  # a backstop wide enough that a busy test machine is never what ends the call

SPIN = """
import threading
def _spin():
    while True:
        pass
for _ in range(8):
    threading.Thread(target=_spin, daemon=True).start()
'started'
"""


async def test_a_slow_cell_after_a_quick_one_that_left_threads_spinning_times_out_as_the_models(sandbox):
    await sandbox.start_python()
    assert await run_code(sandbox, SPIN, timeout=10) == "'started'"
    res = await sandbox.run_python("import time\ntime.sleep(30)", timeout=2, backstop=WIDE)
    assert res.timed_out, res.output
    assert "timed out after 2s" in res.output
