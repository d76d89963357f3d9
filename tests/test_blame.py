"""The blame rule on measured evidence: whose fault a hit time limit or a silent agent is."""

from __future__ import annotations

from sandbox_env.sandbox import SandboxEndedFromInside, Usage
from sandbox_env.sandbox.blame import judge_backstop, judge_silence, judge_time_limit, limits_hit
from sandbox_env.sandbox.docker import cgroup, fuse, procs
from sandbox_env.sandbox.docker.diagnose import diagnose
from sandbox_env.sandbox.docker.events import Ending
from sandbox_env.sandbox.usage import UsagePoint, UsageTrace, between, changed_limits


def usage(cpu=0.0, pressure=0.0, forks=0, ooms=0, wall=10.0) -> Usage:
    return Usage(wall=wall, cpus=1.0, cpu=cpu, cpu_pressure=pressure, fork_failures=forks, memory_failures=ooms)


def test_a_limit_hit_while_the_sandbox_used_its_cpu_is_the_submissions():
    verdict = judge_time_limit(usage(cpu=9.5, pressure=0.05))
    assert verdict.submission and "9.5 s of CPU in 10.0 s" in verdict.why


def test_a_limit_hit_while_the_sandbox_was_starved_is_a_harness_fault():
    verdict = judge_time_limit(usage(cpu=0.6, pressure=0.83))
    assert not verdict.submission and verdict.why.startswith("starved")


def test_waiting_no_longer_than_the_sandbox_used_its_cpu_is_its_own_not_starvation():
    # bursts of its own forks, a third of the time: they queue for the CPU while they use it
    verdict = judge_time_limit(usage(cpu=3.3, pressure=0.35))
    assert verdict.submission and "kept each other waiting" in verdict.why
    # a single busy process held back by the host waits whenever it does not run
    assert not judge_time_limit(usage(cpu=4.0, pressure=0.6)).submission
    assert not judge_time_limit(usage(cpu=1.0, pressure=0.3)).submission


def test_a_sandbox_held_to_a_fraction_of_a_cpu_by_its_quota_is_starved_not_busy():
    # measured on this engine: a 0.05-CPU sandbox used its whole quota and waited about 80 % of the time
    throttled = Usage(wall=10.1, cpus=0.05, cpu=0.6, cpu_pressure=0.8)
    verdict = judge_time_limit(throttled)
    assert not verdict.submission and verdict.why.startswith("starved"), verdict.why
    # the same figures at one CPU: the sandbox barely ran and mostly waited, starved as well
    assert not judge_time_limit(Usage(wall=10.1, cpus=1.0, cpu=0.6, cpu_pressure=0.8)).submission
    # a sandbox of one CPU or more that used its CPU is still busy, whatever its quota
    assert judge_time_limit(Usage(wall=10.0, cpus=1.0, cpu=9.8, cpu_pressure=0.1)).submission
    assert judge_time_limit(Usage(wall=10.0, cpus=2.0, cpu=12.0, cpu_pressure=0.3)).submission
    # and a fractional sandbox that slept is the submission's
    assert judge_time_limit(Usage(wall=10.0, cpus=0.05, cpu=0.01, cpu_pressure=0.0)).submission


def test_a_limit_hit_while_the_sandbox_slept_is_the_submissions_even_on_a_busy_host():
    assert judge_time_limit(usage(cpu=0.01, pressure=0.0)).submission


def test_hitting_the_pids_or_memory_limit_is_the_submissions_whatever_the_load():
    assert judge_time_limit(usage(cpu=0.2, pressure=0.9, forks=250)).submission
    assert judge_time_limit(usage(cpu=0.2, pressure=0.9, ooms=1)).submission


def test_a_sandbox_whose_tasks_multiplied_or_whose_memory_filled_pushed_its_own_limits():
    assert "multiplied to 80 tasks" in limits_hit(Usage(wall=10, cpus=1, peak_pids=80, pids_limit=256))
    assert "memory to its limit" in limits_hit(Usage(wall=10, cpus=1, memory_limit_hits=3))
    assert limits_hit(Usage(wall=10, cpus=1, peak_pids=6, pids_limit=256, memory_limit_hits=0)) is None
    assert judge_time_limit(Usage(wall=10, cpus=1, cpu=0.3, cpu_pressure=0.8, peak_pids=120, pids_limit=256)).submission


def test_evidence_that_cannot_be_measured_proves_nothing_against_the_submission():
    assert not judge_time_limit(None).submission
    assert not judge_time_limit(Usage(wall=10, cpus=1)).submission
    assert not judge_time_limit(Usage(wall=10, cpus=1, cpu=0.1)).submission  # no pressure figure


def test_a_silent_agent_in_an_idle_sandbox_is_the_harnesses_and_in_a_busy_one_the_sandboxes():
    assert not judge_silence(usage(cpu=0.0, pressure=0.0, wall=1.0)).submission
    assert not judge_silence(usage(cpu=0.1, pressure=0.95, wall=1.0)).submission
    assert judge_silence(usage(cpu=0.97, wall=1.0)).submission
    assert judge_silence(usage(cpu=0.1, forks=3, wall=1.0)).submission
    assert not judge_silence(None).submission


def _trace(*points: tuple[float, float, float]) -> UsageTrace:
    trace = UsageTrace(cpus=1.0)
    for at, cpu, stall in points:
        trace.add(UsagePoint(at=at, cpu=cpu, stall=stall, fork_failures=0, oom_kills=0))
    return trace


def test_a_limit_is_judged_by_the_last_seconds_of_the_run_not_its_start():
    # a starved start (the grader's imports waiting for a CPU), then ten seconds asleep in the submission
    asleep = _trace((0, 0, 0), (10, 0.5, 9.0), (20, 0.55, 9.0))
    assert not judge_time_limit(asleep.whole()).submission
    assert judge_backstop(asleep.whole(), asleep.over_last(10), 60).submission  # the last 10 s: asleep, its own
    starved = _trace((0, 0, 0), (10, 9.0, 0.5), (20, 9.3, 9.5))
    verdict = judge_backstop(starved.whole(), starved.over_last(10), 60)
    assert not verdict.submission and "waited for a CPU 90% of the time" in verdict.why


def test_a_busy_loop_that_got_a_small_share_of_a_cpu_is_blamed_once_it_consumed_its_limit():
    # a twelfth of a CPU for 120 s: 10 s of CPU, the whole limit, while it waited 90% of the time
    busy = _trace((0, 0, 0), (110, 9.2, 99.0), (120, 10.0, 108.0))
    assert not judge_time_limit(busy.over_last(10)).submission  # by its last seconds alone: starved
    verdict = judge_backstop(busy.whole(), busy.over_last(10), 10)
    assert verdict.submission and "the whole of the 10 s its limit grants" in verdict.why
    assert not judge_backstop(busy.whole(), busy.over_last(10), 12).submission  # short of a 12 s limit: starved


def test_a_run_without_measurements_is_not_blamed_on_the_submission():
    verdict = judge_backstop(None, None, 10)
    assert not verdict.submission and "could not be measured" in verdict.why


def test_usage_between_points_counts_limit_events_of_the_window_or_since_the_start():
    a = UsagePoint(at=1.0, cpu=2.0, stall=0.5, fork_failures=4, oom_kills=1)
    b = UsagePoint(at=3.0, cpu=3.0, stall=1.5, fork_failures=10, oom_kills=1)
    u = between(a, b, 1.0)
    assert (u.wall, u.cpu, u.cpu_pressure, u.fork_failures, u.memory_failures) == (2.0, 1.0, 0.5, 6, 0)
    assert between(a, b, 1.0, cumulative_limits=True).fork_failures == 10


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_counters_are_read_from_a_hybrid_v1_host(tmp_path):
    cid = "c0ffee"
    _write(tmp_path / "unified" / "docker" / cid / "cpu.stat", "usage_usec 2500000\nuser_usec 2000000\n")
    _write(
        tmp_path / "unified" / "docker" / cid / "cpu.pressure",
        "some avg10=1.00 avg60=0.50 avg300=0.10 total=750000\nfull avg10=0 avg60=0 avg300=0 total=0\n",
    )
    _write(tmp_path / "pids" / "docker" / cid / "pids.events", "max 7\n")
    _write(tmp_path / "pids" / "docker" / cid / "pids.current", "42\n")
    _write(tmp_path / "pids" / "docker" / cid / "pids.max", "256\n")
    _write(tmp_path / "memory" / "docker" / cid / "memory.failcnt", "5\n")
    _write(tmp_path / "memory" / "docker" / cid / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    _write(tmp_path / "memory" / "docker" / cid / "memory.limit_in_bytes", f"{1024 << 20}\n")
    point = cgroup.sample(cgroup.find(cid, tmp_path))
    assert (point.cpu, point.stall, point.fork_failures, point.oom_kills) == (2.5, 0.75, 7, 2)
    assert (point.pids, point.pids_max, point.memory_hits, point.memory_max) == (42, 256, 5, 1024 << 20)


def test_cgroup_counters_are_read_from_a_systemd_v2_host_and_missing_ones_are_none(tmp_path):
    cid = "beef"
    _write(tmp_path / "cgroup.controllers", "cpu memory pids\n")
    leaf = tmp_path / "system.slice" / f"docker-{cid}.scope"
    _write(leaf / "cpu.stat", "usage_usec 1000\n")
    _write(leaf / "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    _write(leaf / "pids.max", "max\n")
    _write(leaf / "memory.max", "536870912\n")
    point = cgroup.sample(cgroup.find(cid, tmp_path))
    assert point.memory_max == 512 << 20
    assert point.cpu == 0.001 and point.oom_kills == 1 and point.memory_hits == 3 and point.fork_failures is None
    assert point.pids_max is None  # no limit
    assert cgroup.sample(cgroup.find("unknown", tmp_path)) is None


def _fake_proc(root, pid: int, name: str, state: str, uid: int, children: list[int] = ()) -> None:
    d = root / str(pid)
    (d / "task" / str(pid)).mkdir(parents=True)
    (d / "status").write_text(f"Name:\t{name}\nState:\t{state}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
    (d / "task" / str(pid) / "children").write_text(" ".join(map(str, children)) + " ")


def test_a_root_supervisor_stopped_or_traced_from_outside_is_found_and_the_models_own_stopped_processes_are_not(tmp_path):
    _fake_proc(tmp_path, 10, "docker-init", "S (sleeping)", 0, [11, 12])
    _fake_proc(tmp_path, 11, "python3", "T (stopped)", 0)
    _fake_proc(tmp_path, 12, "sleep", "T (stopped)", 1000)  # an orphan of the model's, stopped by the model
    assert "stopped by a signal from outside" in procs.stopped_supervisor(10, tmp_path)
    (tmp_path / "11" / "status").write_text("Name:\tpython3\nState:\tt (tracing stop)\nUid:\t0\t0\t0\t0\n")
    assert "stopped by a tracer" in procs.stopped_supervisor(10, tmp_path)
    (tmp_path / "11" / "status").write_text("Name:\tpython3\nState:\tR (running)\nUid:\t0\t0\t0\t0\n")
    assert procs.stopped_supervisor(10, tmp_path) is None
    assert procs.stopped_supervisor(99, tmp_path) is None  # not visible from here: no evidence
    assert procs.stopped_supervisor(None, tmp_path) is None


def test_a_silent_agent_held_from_outside_is_the_harnesses_however_busy_its_sandbox():
    class NoEvents:
        def wait_for_death(self, cid, timeout):
            return None

    def silent(held):
        return diagnose(
            "c" * 64,
            RuntimeError("the sandbox agent stopped answering"),
            events=NoEvents(),
            removing=False,
            stream_closed=False,
            protocol_broken=False,
            running=lambda: True,
            measure=lambda: usage(cpu=0.99, wall=1.0),  # its processes kept the CPU busy
            agent_reachable=False,
            held=held,
        )

    assert isinstance(silent(lambda: None), SandboxEndedFromInside)
    fault = silent(lambda: "its container was paused from outside (docker pause)")
    assert not isinstance(fault, SandboxEndedFromInside) and "paused from outside" in str(fault)


def test_a_remote_engines_container_has_no_cgroup_here_so_no_host_file_is_read_for_it(tmp_path, monkeypatch):
    # a container of an engine on another machine (DOCKER_HOST): its full id names no directory here,
    # even where this machine runs containers of its own; the host's own pressure is not taken for its evidence
    local, remote = "a" * 64, "b" * 64
    _write(tmp_path / "cpuacct" / "docker" / local / "cpuacct.usage", "1000\n")
    read = []
    monkeypatch.setattr(cgroup, "_read", lambda path: read.append(path) or None)
    paths = cgroup.find(remote, tmp_path)
    assert not paths.found and cgroup.sample(paths) is None
    assert read == []


def test_the_cpu_of_the_sandboxs_file_server_counts_as_its_own_use():
    a = UsagePoint(at=0.0, cpu=1.0, stall=0.0, fork_failures=0, oom_kills=0, served=4.0)
    b = UsagePoint(at=10.0, cpu=3.8, stall=8.6, fork_failures=0, oom_kills=0, served=7.3)
    u = between(a, b, 1.0)
    assert (round(u.cpu, 6), round(u.served, 6)) == (6.1, 3.3)
    # readers of the image's files that keep its fuse-overlayfs busy while the rest hangs: measured here
    verdict = judge_time_limit(u)
    assert verdict.submission and "3.3 s of it in the host process serving its file reads" in verdict.why
    # the same run judged by its cgroup alone read as starved
    assert not judge_time_limit(Usage(wall=10.0, cpus=1.0, cpu=2.8, cpu_pressure=0.86)).submission


def test_an_honest_run_on_a_busy_host_is_still_starved_with_its_file_servers_cpu_counted():
    a = UsagePoint(at=0.0, cpu=1.0, stall=0.0, fork_failures=0, oom_kills=0, served=0.30)
    b = UsagePoint(at=10.0, cpu=1.6, stall=8.3, fork_failures=0, oom_kills=0, served=0.34)
    verdict = judge_time_limit(between(a, b, 1.0))
    assert not verdict.submission and verdict.why.startswith("starved")


def test_a_file_server_read_at_one_end_only_adds_nothing():
    a = UsagePoint(at=0.0, cpu=1.0, stall=0.0, fork_failures=0, oom_kills=0, served=None)
    b = UsagePoint(at=10.0, cpu=2.0, stall=0.0, fork_failures=0, oom_kills=0, served=50.0)
    u = between(a, b, 1.0)
    assert u.cpu == 1.0 and u.served is None


UPPER = "/var/lib/docker/fuse-overlayfs/" + "ab" * 32 + "/diff"


def _fake_server(root, pid: int, upper: str, uid: int = 0, started: int = 1000, comm: str = "fuse-overlayfs") -> None:
    d = root / str(pid)
    d.mkdir(parents=True)
    (d / "comm").write_text(comm + "\n")
    (d / "cmdline").write_bytes(
        b"\0".join([b"fuse-overlayfs", b"-o", f"lowerdir=/l/A:/l/B,upperdir={upper},workdir=/w".encode(), b"/merged"]) + b"\0"
    )
    (d / "status").write_text(f"Name:\t{comm}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
    fields = ["S", "1"] + ["0"] * 9 + ["250", "150"] + ["0"] * 6 + [str(started)] + ["0"] * 5
    (d / "stat").write_text(f"{pid} ({comm}) " + " ".join(fields) + "\n")


def test_a_containers_file_server_is_found_by_its_upper_directory_among_root_processes_only(tmp_path):
    attrs = {"GraphDriver": {"Name": "fuse-overlayfs", "Data": {"UpperDir": UPPER}}}
    _fake_server(tmp_path, 40, UPPER, uid=1000)  # a sandboxed process posing as the server
    _fake_server(tmp_path, 41, UPPER + "x")  # another container's
    _fake_server(tmp_path, 42, UPPER, started=777)
    server = fuse.find_server(attrs, tmp_path)
    assert server == fuse.Server(42, 777)
    assert fuse.served_cpu(server, tmp_path) == 400 / fuse.CLK_TCK
    assert fuse.served_cpu(fuse.Server(42, 778), tmp_path) is None  # the pid now names another process
    assert fuse.find_server({"GraphDriver": {"Name": "overlay2", "Data": {"UpperDir": UPPER}}}, tmp_path) is None
    _fake_server(tmp_path, 43, UPPER)  # two root servers of one directory: which is its cannot be told
    assert fuse.find_server(attrs, tmp_path) is None


def test_limits_changed_from_outside_make_hitting_them_no_evidence_against_the_sandbox():
    def point(at, ooms, memory_max, pids_max=256):
        p = UsagePoint(at=at, cpu=at, stall=0.0, fork_failures=0, oom_kills=ooms, memory_max=memory_max, pids_max=pids_max)
        changed = changed_limits(p, memory_bytes=1024 << 20, pids=256)
        return UsagePoint(**{**p.__dict__, "limits_changed": changed})

    assert changed_limits(point(0, 0, 1024 << 20), memory_bytes=1024 << 20, pids=256) is None
    assert "pids 6 instead of 256" in changed_limits(point(0, 0, None, 6), memory_bytes=1024 << 20, pids=256)
    # cut to 24 MiB mid-run (docker update --memory): the OOM kill that follows is not the submission's
    squeezed = between(point(0, 0, 1024 << 20), point(2, 1, 24 << 20), 1.0, middle=[point(1, 0, 24 << 20)])
    assert "memory 24 MiB instead of 1024 MiB" in squeezed.limits_changed
    assert limits_hit(squeezed) is None
    assert not judge_time_limit(squeezed).submission and not judge_silence(squeezed).submission
    # restored before the end: the window is still tainted
    assert between(point(0, 0, 24 << 20), point(2, 1, 1024 << 20), 1.0).limits_changed
    # the limits as set: the same OOM kill is the sandbox's own
    assert "out of memory" in limits_hit(between(point(0, 0, 1024 << 20), point(2, 1, 1024 << 20), 1.0))


def test_an_agent_killed_for_memory_under_a_limit_changed_from_outside_is_the_harnesses():
    class OomEnded:
        def wait_for_death(self, cid, timeout):
            return Ending(oom=True, exit_code=137, died=True)

    def lost(changed):
        return diagnose(
            "c" * 64,
            RuntimeError("the stream to the sandbox agent broke"),
            events=OomEnded(),
            removing=False,
            stream_closed=True,
            protocol_broken=False,
            running=lambda: None,
            measure=lambda: Usage(wall=1.0, cpus=1.0, cpu=0.5, memory_failures=1, limits_changed=changed),
            agent_reachable=False,
        )

    assert isinstance(lost(None), SandboxEndedFromInside)
    fault = lost("its limits were changed from outside the sandbox (memory 24 MiB instead of 1024 MiB)")
    assert not isinstance(fault, SandboxEndedFromInside) and "changed from outside" in str(fault)
