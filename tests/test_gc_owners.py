"""gc on real containers, through the local socket and through `DOCKER_HOST=tcp://`, as for a remote engine.

No second Docker host is at hand, so the engine is reached through a TCP relay to its
socket (`tcp://127.0.0.1:PORT`): to the backend and to gc that is an engine behind a
network address, as a remote one is. Containers are labelled as their owners would label
them: one of this machine whose process ended, one whose pid was reused, this process's
own, one of another machine, one without an owner label. gc removes exactly the provably
gone ones, leaves the other machine's until asked, and the backend works through the
relay with the same labels and the same budget (the engine's id).

Every gc here is limited to the test's own run label: the engine is shared.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading

import pytest

from sandbox_env.sandbox.docker import docker_client
from sandbox_env.sandbox.docker.cleanup import collect, survey
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_HOST, LABEL_OWNER, LABEL_PID, LABEL_RUN, LABEL_SERVER
from sandbox_env.sandbox.owner import Owner, this_owner
from sandbox_env.sandbox.runs import new_run_id

pytestmark = pytest.mark.docker

SOCKET = "/var/run/docker.sock"


class TcpRelay:
    """tcp://127.0.0.1:PORT to the engine's unix socket, byte for byte (attach streams included)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._pipe, args=(conn,), daemon=True).start()

    @staticmethod
    def _pipe(conn: socket.socket) -> None:
        engine = socket.socket(socket.AF_UNIX)
        engine.connect(SOCKET)
        with conn, engine:
            ends = [conn, engine]
            while True:
                ready, _, _ = select.select(ends, [], [])
                for end in ready:
                    data = end.recv(65536)
                    if not data:
                        return
                    (engine if end is conn else conn).sendall(data)

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def relay():
    if not os.path.exists(SOCKET) or os.environ.get("DOCKER_HOST", "unix://").split("://")[0] != "unix":
        pytest.skip(f"needs the engine on {SOCKET}")
    r = TcpRelay()
    yield r
    r.close()


@pytest.fixture
def run_label():
    """The test's own run id: every gc below looks only at containers carrying it."""
    run_id = new_run_id()
    yield f"{LABEL_RUN}={run_id}"
    api = docker_client().api
    for c in api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}):
        api.remove_container(c["Id"], force=True)


def _ended_process() -> Owner:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import os; print(open(f'/proc/{os.getpid()}/stat').read())"], stdout=subprocess.PIPE, text=True
    )
    stat = proc.communicate()[0]
    return Owner(this_owner().scope, proc.pid, int(stat.rsplit(")", 1)[1].split()[19]))


def _made(image: str, run_label: str, name: str, owner: str | None, host: str = "here", pid: str = "") -> str:
    labels = {LABEL: "1", LABEL_RUN: run_label.split("=", 1)[1], LABEL_HOST: host, LABEL_SERVER: name, LABEL_PID: pid}
    if owner is not None:
        labels[LABEL_OWNER] = owner
    return docker_client().api.create_container(image, command=["true"], labels=labels)["Id"]


def _containers(image: str, run_label: str) -> dict[str, str]:
    me = this_owner()
    ended = _ended_process()
    return {
        "ended": _made(image, run_label, "ended", ended.label(), pid=str(ended.pid)),
        "reused": _made(image, run_label, "reused", Owner(me.scope, me.pid, (me.start or 0) + 1).label(), pid=str(me.pid)),
        "mine": _made(image, run_label, "mine", me.label(), pid=str(me.pid)),
        # another machine's server, whose pid happens to be this process's here
        "elsewhere": _made(image, run_label, "elsewhere", Owner("other-boot.1", me.pid, me.start).label(), "hostB", str(me.pid)),
        "unlabelled": _made(image, run_label, "unlabelled", None, pid="0"),
    }


GC_SCRIPT = """
import json, sys
from sandbox_env.sandbox.docker.cleanup import collect, survey
from sandbox_env.sandbox.docker.labels import LABEL_SERVER
only, other_hosts = sys.argv[1], sys.argv[2] == "1"
verdicts = {c["Labels"][LABEL_SERVER]: v.state for c, v in survey(only)}
report = collect(other_hosts=other_hosts, only=only)
print(json.dumps({"verdicts": verdicts, "removed": len(report.removed), "elsewhere": dict(report.left_elsewhere),
                  "unknown": report.left_unknown, "summary": report.summary()}))
"""


def _gc_at(url: str, run_label: str, other_hosts: bool = False) -> dict:
    env = {**os.environ, "DOCKER_HOST": url}
    out = subprocess.run(
        [sys.executable, "-c", GC_SCRIPT, run_label, "1" if other_hosts else "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _left(run_label: str) -> set[str]:
    return {c["Labels"][LABEL_SERVER] for c in docker_client().api.containers(all=True, filters={"label": run_label})}


def test_gc_removes_only_owners_provably_gone_and_leaves_another_machines_until_asked(image, run_label):
    _containers(image, run_label)
    verdicts = {c["Labels"][LABEL_SERVER]: v.state for c, v in survey(run_label)}
    assert verdicts == {"ended": "gone", "reused": "gone", "mine": "live", "elsewhere": "elsewhere", "unlabelled": "gone"}
    report = collect(only=run_label)
    assert len(report.removed) == 3 and dict(report.left_elsewhere) == {"hostB": 1}
    assert "--other-hosts" in report.summary()
    assert _left(run_label) == {"mine", "elsewhere"}
    assert len(collect(other_hosts=True, only=run_label).removed) == 1
    assert _left(run_label) == {"mine"}


def test_gc_through_a_tcp_docker_host_decides_the_same_and_judges_no_unlabelled_container_by_pid(image, run_label, relay):
    _containers(image, run_label)
    seen = _gc_at(relay.url, run_label)
    # through a network address a bare pid proves nothing: the unlabelled container is left
    assert seen["verdicts"] == {
        "ended": "gone",
        "reused": "gone",
        "mine": "live",
        "elsewhere": "elsewhere",
        "unlabelled": "unknown",
    }
    assert seen["removed"] == 2 and seen["elsewhere"] == {"hostB": 1} and seen["unknown"] == 1
    assert _left(run_label) == {"mine", "elsewhere", "unlabelled"}
    assert _gc_at(relay.url, run_label, other_hosts=True)["removed"] == 2
    assert _left(run_label) == {"mine"}


BACKEND_SCRIPT = """
import asyncio, json, sys
from sandbox_env.sandbox.docker import DockerBackend, docker_client
from sandbox_env.sandbox import Sandbox

async def main():
    backend = DockerBackend()
    try:
        async with backend.sandbox(sys.argv[1]) as sb:
            out = await sb.exec("echo through $((40 + 2))", timeout=60)
            labels = docker_client().api.inspect_container(sb.id)["Config"]["Labels"]
            usage = backend.usage_point(sb.id)
        print(json.dumps({"stdout": out.stdout, "labels": labels, "slots": str(backend.budget.directory),
                          "evidence": usage is not None, "tracked": backend.tracked()}))
    finally:
        backend.teardown()

asyncio.run(main())
"""


def test_the_backend_works_through_a_tcp_docker_host_with_the_same_labels_and_the_engines_one_budget(image, relay):
    runs = {}
    for url in (relay.url, "unix://" + SOCKET):
        out = subprocess.run(
            [sys.executable, "-c", BACKEND_SCRIPT, image],
            env={**os.environ, "DOCKER_HOST": url},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        runs[url] = json.loads(out.stdout)
    tcp, unix = runs[relay.url], runs["unix://" + SOCKET]
    assert tcp["stdout"].strip() == "through 42" and tcp["tracked"] == []
    assert Owner.parse(tcp["labels"][LABEL_OWNER]).scope == this_owner().scope
    assert {LABEL_HOST, LABEL_SERVER, LABEL_RUN} <= set(tcp["labels"])
    assert tcp["slots"] == unix["slots"], "one engine, one budget, whatever the URL"
    # the evidence is read from the container's cgroup, found here by its full id: the engine is this machine's
    assert tcp["evidence"] and unix["evidence"]
