"""Past one machine: one set of episodes spread over two v1 env servers, as prime-rl's orchestrator spreads them.

Each server is `websandbox serve` in its own process and session, with its own name.
Where this machine lets the test make network namespaces (root, `ip netns`, `nsenter`),
every server runs in a namespace of its own with its own address on a veth pair
(10.N.i.2; the test's side 10.N.i.1): hosts of their own as far as the network goes, on
this machine's kernel and Docker engine. Elsewhere (or with WEBSANDBOX_TEST_LOOPBACK=1) they bind 127.0.0.2,
127.0.0.3, ... The test prints which route it took.

Hosts in a namespace reach the internet (v1's harness fetches its script's packages with
uv) only through an HTTPS CONNECT proxy the test serves on their gateway, as cluster
nodes often do; everything else they reach is on their own network.

The driver is `sandbox_env.doors.v1.spread.Spread`: one `EnvClient` a server, prime-rl's seeded
weighted draw of the server, a run that raised becomes a failed episode with its error,
plus the liveness watch prime-rl lacks (a killed server's episodes come back failed with
`EnvServerLost` instead of waiting forever). The reference policy is served once, on an
address every server reaches, as prime-rl's inference server is.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import verifiers.v1 as vf
from conftest import SWEEP_TASKS

from sandbox_env.cli.main import POLICY_KEY_VAR, start_policy_server
from sandbox_env.doors.v1.spread import LOST, Spread
from sandbox_env.sandbox.docker import docker_client
from sandbox_env.sandbox.docker.labels import LABEL_HOST, LABEL_OWNER, LABEL_SERVER
from sandbox_env.sandbox.owner import Owner

pytestmark = pytest.mark.docker

TASKS = [*SWEEP_TASKS, "smoke_sum", "smoke_hello"]
KILL_TASKS = ["smoke_sum", "smoke_hello", "orm_adv_01", "fastapi_body_embed", "smoke_sum", "smoke_hello"]
LOST_AFTER = 30.0  # seconds without a health answer before a server is lost (a loaded machine answers late)
SERVER_START = 300.0


@dataclass
class Host:
    bind: str  # the ZMQ address a server on this host binds
    prefix: list[str]  # the command that puts a process on this host
    policy_host: str  # the address at which the test serves the policy to every host
    gateway: str | None = None  # this host's way out (where the CONNECT proxy listens), None: this machine's own network


class ConnectProxy:
    """A small HTTPS CONNECT proxy: the namespaced hosts' only way to PyPI."""

    def __init__(self, host: str) -> None:
        self.server = socket.create_server((host, 0))
        self.url = f"http://{host}:{self.server.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(conn,), daemon=True).start()

    @staticmethod
    def _tunnel(conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            method, target = head.split(b" ", 2)[:2]
            if method != b"CONNECT":
                conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                return
            host, _, port = target.decode().rpartition(":")
            try:
                upstream = socket.create_connection((host, int(port)), timeout=30)
            except OSError:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
                return
            with upstream:
                upstream.settimeout(None)
                conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                rest = head.split(b"\r\n\r\n", 1)[1]
                if rest:
                    upstream.sendall(rest)
                ends = [conn, upstream]
                try:
                    while True:
                        ready, _, _ = select.select(ends, [], [], 300)
                        if not ready:
                            return
                        for end in ready:
                            data = end.recv(65536)
                            if not data:
                                return
                            (upstream if end is conn else conn).sendall(data)
                except OSError:  # one end went away (a reset, a closed pipe): the tunnel ends with it
                    return

    def close(self) -> None:
        self.server.close()


@dataclass
class Network:
    route: str
    hosts: list[Host]
    namespaces: list[str] = field(default_factory=list)

    def close(self) -> None:
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _namespaces(count: int) -> Network | None:
    """`count` network namespaces, each on a veth pair to this one, or None where that is not allowed."""
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("nsenter"):
        return None
    tag, net = uuid.uuid4().hex[:6], random.randint(100, 250)
    made = Network("network namespaces (ip netns, a veth pair each)", [])
    try:
        for i in range(1, count + 1):
            ns, outer, inner = f"ws19-{tag}-{i}", f"wsv{tag}{i}", f"wsp{tag}{i}"
            _ip("netns", "add", ns)
            made.namespaces.append(ns)
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            _ip("link", "set", inner, "netns", ns)
            _ip("addr", "add", f"10.{net}.{i}.1/24", "dev", outer)
            _ip("link", "set", outer, "up")
            _ip("-n", ns, "addr", "add", f"10.{net}.{i}.2/24", "dev", inner)
            _ip("-n", ns, "link", "set", inner, "up")
            _ip("-n", ns, "link", "set", "lo", "up")  # the toolset's bridge is on the server's loopback
            _ip("-n", ns, "route", "add", "default", "via", f"10.{net}.{i}.1")
            prefix = ["nsenter", f"--net=/run/netns/{ns}", "--"]
            made.hosts.append(Host(f"tcp://10.{net}.{i}.2:0", prefix, f"10.{net}.1.1", gateway=f"10.{net}.{i}.1"))
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"network namespaces not available here ({getattr(exc, 'stderr', '') or exc}); using loopback addresses")
        made.close()
        return None
    return made


def _loopback(count: int) -> Network:
    return Network("loopback addresses 127.0.0.2..", [Host(f"tcp://127.0.0.{i + 2}:0", [], "127.0.0.1") for i in range(count)])


@pytest.fixture(scope="module")
def network():
    net = (None if os.environ.get("WEBSANDBOX_TEST_LOOPBACK") else _namespaces(4)) or _loopback(4)
    print(f"\nroute: {net.route}")
    yield net
    net.close()


@pytest.fixture(scope="module")
def proxies(network):
    """One CONNECT proxy a namespaced host, on its gateway address."""
    made = {h.gateway: ConnectProxy(h.gateway) for h in network.hosts if h.gateway}
    yield {gateway: p.url for gateway, p in made.items()}
    for p in made.values():
        p.close()


@pytest.fixture(scope="module")
def policy_url(network):
    server, url = start_policy_server("reference", None, network.hosts[0].policy_host, 0)
    yield url
    server.should_exit = True


@pytest.fixture(scope="module")
def tasks(image):
    config = vf.resolve_env_config({"taskset": {"id": "websandbox", "task_ids": sorted(set(TASKS + KILL_TASKS))}})
    return {t.data.task_id: t for t in vf.load_taskset(config.taskset)}  # client-side, as prime-rl's orchestrator


@dataclass
class Server:
    name: str
    proc: subprocess.Popen
    log: Path
    address: str = ""

    def signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)  # its own session: the server and whatever it started
        except ProcessLookupError:
            pass

    def stop(self, grace: float = 90.0) -> None:
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        self.signal(signal.SIGKILL)
        self.proc.wait(30)


@pytest.fixture
def start_server(image, tmp_path, proxies):
    started: list[Server] = []

    def start(host: Host) -> Server:
        name = f"ws19-{uuid.uuid4().hex[:8]}"
        log = tmp_path / f"{name}.log"
        env = {
            **os.environ,
            POLICY_KEY_VAR: "local-policy",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # uv, for the harness
        }
        if host.gateway:  # https only: the policy (http) and the bridge (loopback) stay direct
            env.update(HTTPS_PROXY=proxies[host.gateway], https_proxy=proxies[host.gateway], NO_PROXY="localhost,127.0.0.1")
        task = json.dumps({"image": image, "pool_size": 0})
        cmd = [
            *host.prefix,
            sys.executable,
            "-m",
            "sandbox_env.cli.main",
            "serve",
            "--address",
            host.bind,
            "--name",
            name,
            "-a",
            task,
        ]
        with log.open("w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        server = Server(name, proc, log)
        started.append(server)
        deadline = time.monotonic() + SERVER_START
        while time.monotonic() < deadline and proc.poll() is None:
            for line in log.read_text().splitlines():
                if "serving on " in line:
                    server.address = line.rsplit("serving on ", 1)[1].strip()
                    return server
            time.sleep(0.5)
        raise AssertionError(f"env server {name} did not start: {log.read_text()[-3000:]}")

    yield start
    for server in started:
        server.stop()


def _containers(name: str) -> list[dict]:
    return docker_client().api.containers(all=True, filters={"label": f"{LABEL_SERVER}={name}"})


async def _gone(name: str, timeout: float = 90.0) -> bool:
    deadline = time.monotonic() + timeout
    while _containers(name):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(1)
    return True


class LabelWatch:
    """What the engine showed of each server's containers while episodes ran."""

    def __init__(self, names: list[str]) -> None:
        self.seen: dict[str, list[dict]] = {n: [] for n in names}
        self._task: asyncio.Task | None = None

    async def _poll(self) -> None:
        while True:
            for name, seen in self.seen.items():
                seen.extend(c["Labels"] for c in await asyncio.to_thread(_containers, name))
            await asyncio.sleep(0.5)

    def __enter__(self):
        self._task = asyncio.get_running_loop().create_task(self._poll())
        return self

    def __exit__(self, *exc) -> None:
        if self._task is not None:
            self._task.cancel()


def _episodes(spread: Spread, tasks: list[vf.Task], url: str, concurrency: int = 4) -> list[asyncio.Task]:
    gate = asyncio.Semaphore(concurrency)
    policy = vf.EvalClientConfig(base_url=url, api_key_var=POLICY_KEY_VAR)

    async def one(task: vf.Task):
        async with gate:
            return await spread.run(task, policy, "reference")

    return [asyncio.get_running_loop().create_task(one(t)) for t in tasks]


async def test_two_env_servers_share_one_set_of_episodes_all_scoring_one_and_leave_no_container(
    network, policy_url, tasks, start_server
):
    os.environ.setdefault(POLICY_KEY_VAR, "local-policy")
    a, b = start_server(network.hosts[0]), start_server(network.hosts[1])
    t0 = time.monotonic()
    async with Spread([a.address, b.address], lost_after=60.0) as spread:
        with LabelWatch([a.name, b.name]) as watch:
            outcomes = await asyncio.gather(*_episodes(spread, [tasks[t] for t in TASKS], policy_url))
        assert spread.lost == []
    wall = time.monotonic() - t0
    by_server = Counter(o.server for o in outcomes)
    print(f"route: {network.route}; servers {a.address} and {b.address}")
    print(f"{len(outcomes)} episodes in {wall:.1f} s ({len(outcomes) / wall:.3f} episodes/s); split {dict(by_server)}")
    bad = {o.episode.task.data.model_extra.get("task_id"): (o.reward, o.error) for o in outcomes if not o.ok or o.reward != 1.0}
    assert bad == {}
    assert set(by_server) == {a.address, b.address}, "both servers served"
    # each server's containers named it, and carried an owner identity of this machine
    for server in (a, b):
        assert watch.seen[server.name], f"no container of {server.name} was seen while it served"
        owners = {Owner.parse(labels.get(LABEL_OWNER)) for labels in watch.seen[server.name]}
        assert None not in owners and {o.pid for o in owners} == {server.proc.pid}
        assert {labels[LABEL_HOST] for labels in watch.seen[server.name]} == {os.uname().nodename}
    a.stop()
    b.stop()
    assert await _gone(a.name) and await _gone(b.name), "a server left containers behind when it stopped"


async def test_a_killed_env_server_fails_its_episodes_with_an_error_and_the_other_keeps_serving(
    network, policy_url, tasks, start_server
):
    os.environ.setdefault(POLICY_KEY_VAR, "local-policy")
    survivor, doomed = start_server(network.hosts[2]), start_server(network.hosts[3])
    async with Spread([survivor.address, doomed.address], lost_after=LOST_AFTER) as spread:
        running = _episodes(spread, [tasks[t] for t in KILL_TASKS], policy_url)
        deadline = time.monotonic() + 240
        while not _containers(doomed.name):  # an episode of the doomed server is under way
            assert time.monotonic() < deadline, "the doomed server never started a sandbox"
            await asyncio.sleep(0.2)
        doomed.signal(signal.SIGKILL)  # the host is lost: the server and everything it started, at once
        killed_at = time.monotonic()
        outcomes = await asyncio.gather(*running)
        failed = [o for o in outcomes if not o.ok]
        print(
            f"route: {network.route}; {len(failed)} of {len(outcomes)} episodes failed after the kill, "
            f"every episode back {time.monotonic() - killed_at:.1f} s after it"
        )
        assert failed, "the killed server had an episode in flight"
        assert {o.server for o in failed} == {doomed.address}
        assert {o.error.type for o in failed} == {LOST}
        assert all(o.reward == 1.0 for o in outcomes if o.server == survivor.address)
        assert spread.lost == [doomed.address] and spread.live == [survivor.address]
        # rescheduled, as the orchestrator does with errored episodes: the survivor serves them
        again = await asyncio.gather(
            *_episodes(spread, [tasks[o.episode.task.data.model_extra["task_id"]] for o in failed], policy_url)
        )
        assert [(o.server, o.ok, o.reward) for o in again] == [(survivor.address, True, 1.0)] * len(failed)
    assert await _gone(doomed.name), "the killed server's containers outlived it (its reaper removes them)"
    survivor.stop()
    assert await _gone(survivor.name)
