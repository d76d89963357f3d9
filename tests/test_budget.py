"""The container budget and run liveness: lock files shared by processes, freed when a holder dies."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest

from sandbox_env.sandbox.budget import SandboxBudget, default_max_sandboxes
from sandbox_env.sandbox.locks import RUNTIME_DIR_VAR
from sandbox_env.sandbox.runs import RUN_ID_VAR, current_run_id, hold_run, run_is_live

HOLDER = """
import sys, time
from pathlib import Path
from sandbox_env.sandbox.budget import SandboxBudget
budget = SandboxBudget(int(sys.argv[2]), Path(sys.argv[1]))
held = [budget.try_acquire() for _ in range(int(sys.argv[3]))]
assert all(held), "could not take the slots"
print("held", flush=True)
time.sleep(600)
"""

RUN_HOLDER = """
import time
from sandbox_env.sandbox.runs import current_run_id, hold_run
hold_run(current_run_id())
print("held", flush=True)
time.sleep(600)
"""


def _start(code: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def test_slots_are_shared_by_processes_and_freed_when_their_holder_is_killed(tmp_path):
    budget = SandboxBudget(3, tmp_path)
    other = _start(HOLDER, str(tmp_path), "3", "2")
    try:
        assert budget.in_use() == 2
        mine = budget.try_acquire()
        assert mine is not None
        assert budget.try_acquire() is None  # 2 held by the other process + 1 here = the budget
    finally:
        _kill(other)
    assert budget.in_use() == 1  # SIGKILL freed the other's slots: no cleanup needed
    assert budget.try_acquire() is not None


async def test_past_the_budget_work_waits_in_a_queue_instead_of_failing(tmp_path):
    budget = SandboxBudget(2, tmp_path)
    running = peak = 0

    async def job():
        nonlocal running, peak
        slot = await budget.acquire()
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        budget.release(slot)

    await asyncio.wait_for(asyncio.gather(*(job() for _ in range(7))), timeout=60)
    assert peak == 2
    assert budget.in_use() == 0


async def test_pool_refills_leave_the_reserve_to_demand(tmp_path):
    budget = SandboxBudget(8, tmp_path)
    assert budget.reserve == 2
    pool = [await asyncio.wait_for(budget.acquire(spare=True), 5) for _ in range(6)]
    refill = asyncio.ensure_future(budget.acquire(spare=True))
    await asyncio.sleep(0.3)
    assert not refill.done()  # a seventh idle pool sandbox would eat into the reserve
    demand = [await asyncio.wait_for(budget.acquire(), 5) for _ in range(2)]  # demand still gets the last two
    assert budget.try_acquire() is None
    budget.release(demand[0])
    budget.release(demand[1])
    budget.release(pool[0])
    await asyncio.wait_for(refill, 5)  # with the reserve free again, the refill proceeds
    budget.release(refill.result())
    for slot in pool:
        budget.release(slot)
    assert budget.in_use() == 0


def test_a_slot_released_twice_frees_only_itself(tmp_path):
    budget = SandboxBudget(2, tmp_path)
    a, b = budget.try_acquire(), budget.try_acquire()
    budget.release(a)
    budget.release(a)
    assert budget.in_use() == 1 and b is not None


def test_the_default_is_four_per_core_bounded_by_memory_at_the_container_limit():
    gib = 1 << 30
    assert default_max_sandboxes(cores=2, memory_bytes=24 * gib, memory_mb=1024) == 8
    assert default_max_sandboxes(cores=64, memory_bytes=16 * gib, memory_mb=1024) == 12
    assert default_max_sandboxes(cores=8, memory_bytes=64 * gib, memory_mb=4096) == 12
    assert default_max_sandboxes(cores=1, memory_bytes=1 * gib, memory_mb=1024) == 2


def test_a_budget_below_one_is_refused(tmp_path):
    with pytest.raises(ValueError, match="at least 1"):
        SandboxBudget(0, tmp_path)


def test_a_run_is_live_while_any_of_its_processes_lives(tmp_path, monkeypatch):
    monkeypatch.setenv(RUNTIME_DIR_VAR, str(tmp_path))
    env = {RUNTIME_DIR_VAR: str(tmp_path), RUN_ID_VAR: "run-under-test"}
    first, second = _start(RUN_HOLDER, env=env), _start(RUN_HOLDER, env=env)
    try:
        assert run_is_live("run-under-test")
        _kill(first)
        assert run_is_live("run-under-test")
    finally:
        _kill(second)
    deadline = time.monotonic() + 10
    while run_is_live("run-under-test") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not run_is_live("run-under-test")
    assert not run_is_live("never-started")


def test_the_run_id_comes_from_the_environment_or_is_made_once_per_process(monkeypatch):
    monkeypatch.setenv(RUN_ID_VAR, "given-by-the-cli")
    assert current_run_id() == "given-by-the-cli"
    monkeypatch.delenv(RUN_ID_VAR)
    own = current_run_id()
    assert own == current_run_id() and own != "given-by-the-cli"
    hold_run(own)
    assert run_is_live(own)
    monkeypatch.setenv(RUN_ID_VAR, "../../etc")
    with pytest.raises(ValueError, match="is not a run id"):
        current_run_id()
