"""bench/cpuacct.py: the CPU accounting that bench/cpu.py reads, over a made-up process table.

The kernel hands pids out again; on a loaded machine with pid_max 32768 that happens
within a run. The meter must judge a reused pid as the new process it is.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import cpuacct  # noqa: E402

ROOT = 100


class Table:
    """A fake /proc: pid -> (own CPU, reaped CPU, ppid, comm, argv)."""

    def __init__(self) -> None:
        self.procs: dict[int, tuple[float, float, int, str, list[str]]] = {ROOT: (1.0, 0.0, 1, "python", ["python", "bench"])}

    def times(self, pid: int):
        p = self.procs.get(pid)
        return None if p is None else p[:4]

    def argv(self, pid: int) -> list[str]:
        p = self.procs.get(pid)
        return [] if p is None else list(p[4])


@pytest.fixture
def table(monkeypatch) -> Table:
    t = Table()
    monkeypatch.setattr(cpuacct, "proc_times", t.times)
    monkeypatch.setattr(cpuacct, "cmdline", t.argv)
    return t


def meter() -> cpuacct.Meter:
    m = cpuacct.Meter(docker_root="/nonexistent")
    m.root_pid = ROOT
    m._tree = {ROOT}
    return m


def sample(m: cpuacct.Meter, table: Table) -> None:
    m._discover(sorted(table.procs))
    m._sample_host()
    m._sample_helpers()


def test_a_run_process_that_exits_keeps_its_cpu_and_a_stranger_with_its_pid_is_not_counted(table):
    m = meter()
    table.procs[200] = (2.5, 0.0, ROOT, "vf-eval", ["python", "/venv/bin/vf-eval", "websandbox"])
    sample(m, table)
    del table.procs[200]
    sample(m, table)
    table.procs[200] = (40.0, 0.0, 1, "bash", ["bash", "-c", "someone else's work"])  # the pid, handed out again
    sample(m, table)
    assert m.host_by_name().get("vf-eval") == 2.5
    assert "bash" not in m.host_by_name()
    assert m.host_cpu_at(float("inf")) == 2.5


def test_a_shim_that_gets_a_pid_seen_before_is_still_found(table):
    m = meter()
    table.procs[300] = (0.1, 0.0, 1, "sleep", ["sleep", "1"])
    sample(m, table)
    del table.procs[300]
    sample(m, table)
    table.procs[300] = (0.0, 0.0, 1, "containerd-shim", ["containerd-shim-runc-v2", "-namespace", "moby", "-id", "c" * 64])
    sample(m, table)
    assert m._shims == {300: "c" * 64}


def test_a_reaper_that_exits_keeps_its_cpu_in_the_detached_figure(table):
    m = meter()
    table.procs[200] = (0.5, 0.0, ROOT, "vf-eval", ["python", "/venv/bin/vf-eval"])
    table.procs[400] = (0.3, 0.0, 1, "python3", ["python3", "/x/reaper.py", "200", "label"])
    sample(m, table)
    del table.procs[400]
    sample(m, table)
    assert m.detached_cpu() == pytest.approx(0.3)
    assert m.host_by_name()["reaper"] == pytest.approx(0.3)


def test_a_container_removed_before_its_shim_reaped_its_processes_keeps_its_runc_calls():
    """Force-removed: the shim's last sample holds only runc calls, the cgroup the container's processes."""
    c = cpuacct.Container("c", "rollout", usage=1.2, shim_own=0.02, shim_children=0.1, init_reaped=True, fuse=0.3)
    assert c.total == pytest.approx(1.2 + 0.02 + 0.1 + 0.3)
    assert c.shim == pytest.approx(0.12)


def test_a_container_whose_shim_reaped_its_processes_is_counted_once():
    """Exited on its own: the shim's reaped time holds the container's processes and the runc calls."""
    c = cpuacct.Container("c", "floor", usage=1.1, shim_own=0.02, shim_children=1.25, init_reaped=True, fuse=0.3)
    assert c.total == pytest.approx(0.02 + 1.25 + 0.3)
    assert c.shim == pytest.approx(0.02 + 0.15)
