"""The agent's per-call limit samples the sandboxed side's clock only once a call has run FIRST_SAMPLE seconds.

Pure logic of runtime/container/agent.py's CallLimit, with the clock (runtime/container/clock.py's SideClock,
a pass over /proc) and the time replaced: a call that ends quickly never samples; the
time before the baseline counts as active up to FIRST_SAMPLE and no further, so a
baseline the agent took late (a busy sandbox or host) never counts towards the model's
timeout; after it, the limit and the backstop decide as they did. The real clock under
real load is tests/test_tool_limits.py's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

RUNTIME = str(Path(__file__).resolve().parents[1] / "sandbox_env" / "runtime" / "container")
sys.path.insert(0, RUNTIME)  # the agent imports its neighbours as the image runs it
try:
    import agent
finally:
    sys.path.remove(RUNTIME)


class _Time:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class _Clock:
    made = 0

    def __init__(self, keep) -> None:
        _Clock.made += 1
        self.active = 0.0
        self.cost = 0.0
        self.cpu = 0.0

    def tick(self) -> float:
        return 0.0


@pytest.fixture
def fake(monkeypatch):
    t = _Time()
    _Clock.made = 0
    monkeypatch.setattr(agent, "time", t)
    monkeypatch.setattr(agent, "SideClock", _Clock)
    monkeypatch.setattr(agent, "_harness_pids", lambda: frozenset({1}))
    return t


def test_a_call_that_ends_before_the_first_sample_never_samples_the_clock(fake):
    limit = agent.CallLimit(2.0, backstop=6.0)
    for _ in range(5):
        fake.now += agent.FIRST_SAMPLE / 10
        assert 0 < limit.remaining() <= agent.FIRST_SAMPLE
    assert _Clock.made == 0 and limit.outcome is None


def test_the_baseline_is_taken_at_the_first_sample_and_the_time_before_it_counts_as_active(fake):
    limit = agent.CallLimit(2.0, backstop=6.0)
    fake.now += agent.FIRST_SAMPLE
    assert limit.remaining() > 0
    assert _Clock.made == 1 and limit.credit == pytest.approx(agent.FIRST_SAMPLE)
    limit.clock.active = 2.0 - agent.FIRST_SAMPLE + 0.01  # the side's active time since the baseline
    fake.now = limit.next_tick
    assert limit.remaining() == 0 and limit.outcome == agent.CallLimit.TIMED_OUT


def test_a_baseline_taken_late_credits_no_more_than_the_first_sample(fake):
    limit = agent.CallLimit(2.0, backstop=6.0)
    fake.now += 1.5  # the agent got no CPU for its first sample until then
    limit.remaining()
    assert limit.credit == pytest.approx(agent.FIRST_SAMPLE)
    limit.clock.active = 0.5  # not enough with the credit: no timeout
    fake.now = limit.next_tick
    assert limit.remaining() > 0 and limit.outcome is None
    fake.now = limit.end  # the backstop passes with the side active less than its limit: starved
    assert limit.remaining() == 0 and limit.outcome == agent.CallLimit.STARVED
    report = limit.report()
    assert report["active"] == pytest.approx(agent.FIRST_SAMPLE + 0.5) and report["wall"] == pytest.approx(6.0)


def test_a_backstop_that_passes_before_any_sample_still_samples_and_judges(fake):
    limit = agent.CallLimit(0.01, backstop=0.02)
    fake.now += 0.02
    assert limit.remaining() == 0 and _Clock.made == 1
    assert limit.outcome == agent.CallLimit.TIMED_OUT  # the credit alone reached the limit


def test_a_call_without_a_backstop_counts_the_wall_clock_and_never_samples(fake):
    limit = agent.CallLimit(1.0)
    fake.now += 0.5
    assert limit.remaining() == pytest.approx(0.5)
    fake.now += 0.5
    assert limit.remaining() == 0 and limit.outcome == agent.CallLimit.TIMED_OUT and _Clock.made == 0
