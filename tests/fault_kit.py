"""Faults injected from outside a sandbox, as the host, the engine or the machine would fail.

Every fault goes through the real Docker engine with the `docker` SDK (or, for SIGSTOP,
the host's own `kill`), aimed at one container found by its labels
(`websandbox.client` = the backend that made it, `websandbox.role` = rollout or grader)
at the moment its work is under way (`Injector` hears of it from the engine's events and
polls `docker top` for a process whose command line holds a given text). Nothing here is done from inside a sandbox.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import docker
import docker.errors

from sandbox_env.sandbox.docker import cgroup, docker_client

# what a grading container runs for each family, as `docker top` shows it
GRADER_PROGRAMS = {"fastapi": "http_driver.py", "django": "pytest_runner.py", "smoke": "smoke_grader.py"}
STARVED_NANO_CPUS = 10_000_000  # 0.01 CPU, as `docker update --cpus 0.01`
LOWERED_PIDS = 2  # fewer tasks than any sandbox holds at once: no new process can start
SQUEEZE_MB = 1  # room left over a container's memory use when its limit is cut


def api():
    return docker_client().api


def processes(cid: str) -> list[tuple[int, str]]:
    """(host pid, command line) of every process of container `cid`; [] when it is gone or paused."""
    try:
        rows = api().top(cid, ps_args="-eo pid,args")["Processes"] or []
    except docker.errors.APIError:
        return []
    return [(int(r[0]), r[-1]) for r in rows]


def agent_pid(cid: str) -> int:
    return next(pid for pid, args in processes(cid) if "runtime/agent.py" in args and "docker-init" not in args)


def kill(cid: str) -> None:
    """`docker kill`: SIGKILL from the engine."""
    api().kill(cid)


def remove(cid: str) -> None:
    """`docker rm -f`."""
    api().remove_container(cid, force=True)


def pause(cid: str) -> None:
    """`docker pause`: the container's cgroup frozen."""
    api().pause(cid)


def stop_agent(cid: str) -> None:
    """SIGSTOP to the in-container agent, sent by root on the host (its children keep running)."""
    os.kill(agent_pid(cid), signal.SIGSTOP)


def starve(cid: str, nano_cpus: int = STARVED_NANO_CPUS) -> None:
    """`docker update --cpus 0.01`: the container's CPU limit cut to a hundredth of a CPU (or `nano_cpus`).

    The SDK's `update_container` has no `NanoCpus` (and the engine refuses a CFS period on
    a container made with one), so the engine's update endpoint is called as the CLI does.
    """
    c = api()
    c._raise_for_status(c._post_json(c._url("/containers/{0}/update", cid), data={"NanoCpus": nano_cpus}))


def _update(cid: str, **resources) -> None:
    """The engine's update endpoint (`docker update`), called as the CLI calls it."""
    c = api()
    c._raise_for_status(c._post_json(c._url("/containers/{0}/update", cid), data=resources))


def lower_pids_limit(cid: str, pids: int = LOWERED_PIDS) -> None:
    """`docker update --pids-limit 2`: the container's process limit cut below what its programs hold."""
    _update(cid, PidsLimit=pids)


def lower_memory_limit(cid: str) -> None:
    """`docker update --memory M --memory-swap M`, M a few MiB over the container's resident memory now.

    The engine refuses a limit that reclaim cannot reach, so the cut leaves `SQUEEZE_MB` over
    what the processes hold: the programs that are still importing outgrow it.
    """
    paths = cgroup.find(cid)
    stat = paths.memory / "memory.stat" if paths.memory is not None else paths.unified / "memory.stat"
    fields = dict(line.split() for line in stat.read_text().splitlines())
    used = int(fields.get("total_rss", fields.get("anon", 0)))  # what reclaim cannot give back
    for extra in (SQUEEZE_MB << n for n in range(7)):  # the use grows while we ask
        limit = used + (extra << 20)
        try:
            return _update(cid, Memory=limit, MemorySwap=limit)
        except docker.errors.APIError as exc:
            if "unable to set memory limit" not in str(exc):
                raise
    raise AssertionError(f"the engine refused every memory limit near the use of {cid[:12]}")


def program_pid(cid: str, needle: str) -> int:
    """Host pid of the container's process whose command line holds `needle` (not docker-init, not the agent)."""
    return next(pid for pid, args in processes(cid) if needle in args and "docker-init" not in args)


def kill_program(needle: str, sig: int = signal.SIGKILL):
    """A fault: `sig` sent by root on the host to the container's process running `needle` (found by `docker top`)."""

    def fault(cid: str) -> None:
        os.kill(program_pid(cid, needle), sig)

    return fault


FAULTS = {"docker kill": kill, "docker rm -f": remove, "docker pause": pause, "SIGSTOP to the agent": stop_agent}


def mine(client_id: str, role: str) -> list[str]:
    filters = {"label": [f"websandbox.client={client_id}", f"websandbox.role={role}"]}
    return [c["Id"] for c in api().containers(filters=filters)]


class Injector:
    """Applies `fault` to the first `times` containers of `role` made by backend `client_id`, once `needle` runs in them.

    The engine's event stream names each such container as it starts (listing containers on a
    timer could miss a short-lived grading container on a busy machine); a thread per container
    then polls `docker top` until `needle` runs, waits `delay` and strikes. `hits` lists the
    containers struck and `errors` what went wrong applying a fault. Use as a context manager.
    """

    POLL = 0.02

    def __init__(self, client_id: str, role: str, needle: str, fault, times: int = 1, delay: float = 0.3) -> None:
        self.client_id, self.role, self.needle, self.fault, self.times, self.delay = client_id, role, needle, fault, times, delay
        self.hits: list[str] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._watched: set[str] = set()
        self._threads: list[threading.Thread] = []
        labels = [f"websandbox.client={client_id}", f"websandbox.role={role}"]
        self._events = docker.from_env().api.events(
            since=int(time.time()) - 1, filters={"type": "container", "event": "start", "label": labels}, decode=True
        )
        self._reader = threading.Thread(target=self._read_events, daemon=True)

    def __enter__(self) -> Injector:
        self._reader.start()
        for cid in mine(self.client_id, self.role):
            self._watch(cid)
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._events.close()
        for thread in [self._reader, *self._threads]:
            thread.join(30)

    def _read_events(self) -> None:
        try:
            for event in self._events:
                if self._stop.is_set():
                    return
                self._watch(event.get("id") or event.get("Actor", {}).get("ID", ""))
        except Exception:  # noqa: BLE001 - the stream closed at exit
            return

    def _watch(self, cid: str) -> None:
        with self._lock:
            if not cid or cid in self._watched:
                return
            self._watched.add(cid)
        thread = threading.Thread(target=self._strike_when_ready, args=(cid,), daemon=True)
        self._threads.append(thread)
        thread.start()

    def _strike_when_ready(self, cid: str) -> None:
        while not self._stop.is_set() and self._wanted():
            if any(self.needle in args for _, args in processes(cid)):
                break
            if not _running(cid):
                return
            time.sleep(self.POLL)
        else:
            return
        time.sleep(self.delay)  # into the work, not at its first instruction
        with self._lock:
            if not self._wanted():
                return
            self.hits.append(cid)
        try:
            self.fault(cid)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(f"{cid[:12]}: {exc}")

    def _wanted(self) -> bool:
        return len(self.hits) < self.times


def _running(cid: str) -> bool:
    try:
        return bool(api().inspect_container(cid)["State"]["Running"])
    except docker.errors.NotFound:
        return False


def leftovers(client_id: str, within: float = 60) -> list[str]:
    """Containers of backend `client_id` still there after `within` seconds (background removals finish first)."""
    deadline = time.monotonic() + within
    while True:
        left = [c["Id"][:12] for c in api().containers(all=True, filters={"label": f"websandbox.client={client_id}"})]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)
