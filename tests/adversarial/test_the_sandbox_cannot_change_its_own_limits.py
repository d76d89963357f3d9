"""Code in a sandbox cannot change its own cgroup limits to make its zero read as a harness fault.

A limit that differs from the one the backend set is a harness fault (blame rule 5, docs/architecture.md). A
policy that has read this would lower its own pids or memory limit from inside, so that a
wrong answer is rescheduled instead of scored. The cgroup files are read-only inside the
container, so the attempt fails and the evidence shows no change.
"""

from __future__ import annotations

import pytest

from sandbox_env.rollout.tools import run_bash

pytestmark = pytest.mark.docker

LOWER_OWN_LIMITS = (
    "for f in /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/memory.max "
    "/sys/fs/cgroup/memory/memory.limit_in_bytes; do "
    '[ -e "$f" ] && { echo 2 > "$f" && echo "WROTE $f" || echo "refused $f"; }; done; echo done'
)


async def test_a_sandbox_that_lowers_its_own_limits_is_refused_and_its_evidence_shows_no_change(backend, sandbox):
    out = await run_bash(sandbox, LOWER_OWN_LIMITS, timeout=10)
    assert "done" in out and "WROTE" not in out, out
    point = backend.usage_point(sandbox.id)
    assert point is not None and point.limits_changed is None, point
