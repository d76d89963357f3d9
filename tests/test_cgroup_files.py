"""A container's cgroup files kept open (cgroup.Files) read what reading them by path reads, at every sample.

The backend samples every container before and after every call through `Files`, which
keeps each file open and reads it again with `pread`. These tests hold it to the by-path
reader on the fake cgroup trees of test_blame.py's layouts: the same point, a changed
counter or limit seen at the next sample (a limit lowered from outside between two
calls), a file that appears later still read, and nothing read once it is closed.
"""

from __future__ import annotations

import os

from sandbox_env.sandbox.docker import cgroup, fuse


def _write(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _hybrid(tmp_path, cid: str, memory_limit: int, pids_limit: int = 256) -> None:
    _write(tmp_path / "unified" / "docker" / cid / "cpu.stat", "usage_usec 2500000\nuser_usec 2000000\n")
    _write(tmp_path / "unified" / "docker" / cid / "cpu.pressure", "some avg10=1.00 avg60=0.50 avg300=0.10 total=750000\n")
    _write(tmp_path / "pids" / "docker" / cid / "pids.events", "max 7\n")
    _write(tmp_path / "pids" / "docker" / cid / "pids.current", "42\n")
    _write(tmp_path / "pids" / "docker" / cid / "pids.max", f"{pids_limit}\n")
    _write(tmp_path / "memory" / "docker" / cid / "memory.failcnt", "5\n")
    _write(tmp_path / "memory" / "docker" / cid / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    _write(tmp_path / "memory" / "docker" / cid / "memory.limit_in_bytes", f"{memory_limit}\n")


def _same(a, b) -> bool:
    return {**a.__dict__, "at": 0} == {**b.__dict__, "at": 0}


def test_kept_open_files_read_the_same_point_as_reading_by_path(tmp_path):
    _hybrid(tmp_path, "c0ffee", 1024 << 20)
    paths = cgroup.find("c0ffee", tmp_path)
    files = cgroup.Files()
    try:
        kept, by_path = cgroup.sample(paths, files), cgroup.sample(paths)
        assert kept is not None and _same(kept, by_path), (kept, by_path)
        assert (kept.cpu, kept.pids_max, kept.memory_max, kept.oom_kills) == (2.5, 256, 1024 << 20, 2)
    finally:
        files.close()


def test_a_limit_changed_between_two_samples_is_seen_by_the_second(tmp_path):
    _hybrid(tmp_path, "c0ffee", 1024 << 20)
    paths = cgroup.find("c0ffee", tmp_path)
    files = cgroup.Files()
    try:
        assert cgroup.sample(paths, files).memory_max == 1024 << 20
        # rewritten in place, as the kernel regenerates the file (docker update --memory 24m --pids-limit 2)
        (tmp_path / "memory" / "docker" / "c0ffee" / "memory.limit_in_bytes").write_text(f"{24 << 20}\n")
        (tmp_path / "pids" / "docker" / "c0ffee" / "pids.max").write_text("2\n")
        point = cgroup.sample(paths, files)
        assert (point.memory_max, point.pids_max) == (24 << 20, 2), point
    finally:
        files.close()


def test_a_file_missing_at_first_is_read_once_it_exists_and_nothing_is_read_after_close(tmp_path):
    files = cgroup.Files()
    target = tmp_path / "later"
    assert files.read(target) is None
    before = len(os.listdir("/proc/self/fd"))
    target.write_text("1\n")
    assert files.read_in(tmp_path, "later") == "1\n"
    files.close()
    assert files.read_in(tmp_path, "later") is None
    assert len(os.listdir("/proc/self/fd")) <= before  # every descriptor it held is closed


def test_the_file_servers_cpu_is_read_through_the_kept_open_files_and_checked_against_its_start(tmp_path):
    stat = tmp_path / "77" / "stat"
    _write(stat, "77 (fuse-overlayfs) S " + " ".join(["0"] * 10) + " 300 100 0 0 0 0 0 0 5000 0\n")
    files = cgroup.Files()
    try:
        assert fuse.served_cpu(fuse.Server(77, 5000), tmp_path, read=files.read) == 400 / fuse.CLK_TCK
        assert fuse.served_cpu(fuse.Server(77, 4999), tmp_path, read=files.read) is None  # another process now
    finally:
        files.close()
