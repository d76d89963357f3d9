"""Whose is a container, and is its owner provably gone: gc's decision, from labels and this machine's facts.

Pure: every fact of the judging machine (its scope, run locks, processes) comes in as an
argument; tests/test_gc_owners.py runs the same decision on real containers.
"""

from __future__ import annotations

import subprocess
import sys

from sandbox_env.sandbox.owner import ALIVE_START_UNKNOWN, Owner, owner_liveness, process_start, this_owner, this_scope

HERE = "boot-here.4026531836"
THERE = "boot-there.4026531836"


def _liveness(owner: str | None, *, run: str = "", pid: str = "", live_runs=(), processes=None, local_engine: bool = True):
    processes = processes or {}
    return owner_liveness(
        owner,
        run=run,
        pid=pid,
        host="other-host",
        scope=HERE,
        run_live=lambda r: r in live_runs,
        probe=lambda p: processes.get(p),
        local_engine=local_engine,
    ).state


def test_an_owner_of_this_machine_whose_process_ended_is_gone():
    assert _liveness(Owner(HERE, 4242, 1000).label()) == "gone"


def test_an_owner_of_this_machine_still_running_is_live():
    assert _liveness(Owner(HERE, 4242, 1000).label(), processes={4242: 1000}) == "live"


def test_a_reused_pid_does_not_keep_a_dead_owners_containers():
    assert _liveness(Owner(HERE, 4242, 1000).label(), processes={4242: 5000}) == "gone"


def test_a_process_whose_start_cannot_be_read_counts_as_the_owner():
    assert _liveness(Owner(HERE, 4242, 1000).label(), processes={4242: ALIVE_START_UNKNOWN}) == "live"


def test_a_live_run_keeps_its_containers_when_the_worker_that_made_them_died():
    assert _liveness(Owner(HERE, 4242, 1000).label(), run="run1", live_runs={"run1"}) == "live"


def test_another_machines_container_is_never_judged_by_a_local_pid():
    other = Owner(THERE, 4242, 1000).label()
    # the pid is free here: the old rule removed another server's live containers
    assert _liveness(other) == "elsewhere"
    # the pid is taken here by some process: the old rule kept a dead server's containers forever
    assert _liveness(other, processes={4242: 1000}) == "elsewhere"
    # nor by a run lock of the same name on this machine
    assert _liveness(other, run="run1", live_runs={"run1"}) == "elsewhere"


def test_a_container_without_owner_label_is_judged_by_the_old_rule_only_on_a_local_engine():
    assert _liveness(None, pid="4242") == "gone"
    assert _liveness(None, pid="4242", processes={4242: 1}) == "live"
    assert _liveness(None, pid="4242", run="run1", live_runs={"run1"}) == "live"
    assert _liveness(None, pid="4242", local_engine=False) == "unknown"


def test_owner_labels_round_trip_and_junk_names_no_owner():
    owner = Owner("a972e3fb-3712-4ea9-a4ec-fc2374a001a2.4026531836", 5259, 45589)
    assert Owner.parse(owner.label()) == owner
    assert Owner.parse(Owner(HERE, 7, None).label()) == Owner(HERE, 7, None)
    for junk in (None, "", "1234", "scope/x/1", "/1/2"):
        assert Owner.parse(junk) is None


def test_this_process_is_its_own_live_owner_and_an_ended_one_is_gone():
    me = this_owner()
    assert me.scope == this_scope() and me.start is not None
    assert process_start(me.pid) == me.start
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert process_start(child.pid) is None
    assert process_start(0) is None and process_start(-1) is None
