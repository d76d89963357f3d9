"""Throughput over one and over several v1 env servers, driven as prime-rl's orchestrator drives them.

    python bench/servers.py [--servers 1,2] [-n 24] [-c 8]          # servers started here, on loopback
    python bench/servers.py --connect tcp://hostA:5000 tcp://hostB:5000 --policy-host 10.0.0.1

Needs the v1 stack (`.venv-v1`). For each count in `--servers` it starts that many
`websandbox serve` processes on this machine (each its own port and name, sandboxes on the
engine `DOCKER_HOST` names), warms each up with one episode, then runs the same `-n`
episodes at concurrency `-c` over them through `sandbox_env.doors.v1.spread.Spread` (one
`EnvClient` a server, prime-rl's seeded weighted draw) against the reference policy
served here, and prints episodes per second, the split, rewards and errors. With
`--connect` it drives servers already running elsewhere (`websandbox serve --address
tcp://0.0.0.0:5000` on each Docker host); `--policy-host` is where those servers reach
the policy served here.

Servers started here share this machine's cores and its engine's container budget, so
on one machine a second server shows what spreading costs or saves, not what a second
machine adds. The episodes: `-n` tasks taken evenly over every task of the dataset (all
three families), once each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

POLICY_KEY_VAR = "WEBSANDBOX_POLICY_KEY"
START_TIMEOUT = 300.0


def start_server(image: str, log_dir: Path, index: int) -> tuple[subprocess.Popen, str, str]:
    """One `websandbox serve` on a free loopback port, in its own session; returns (process, address, name)."""
    name = f"bench-{index}-{uuid.uuid4().hex[:6]}"
    log = log_dir / f"{name}.log"
    env = {**os.environ, POLICY_KEY_VAR: "local-policy", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    cmd = [sys.executable, "-m", "sandbox_env.cli.main", "serve", "--address", "tcp://127.0.0.1:0", "--name", name]
    cmd += ["-a", json.dumps({"image": image, "pool_size": 0})]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        for line in log.read_text().splitlines():
            if "serving on " in line:
                return proc, line.rsplit("serving on ", 1)[1].strip(), name
        time.sleep(0.5)
    stop(proc)
    raise RuntimeError(f"env server {name} did not start; its log: {log}")


def stop(proc: subprocess.Popen, grace: float = 90.0) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(grace)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(30)


def pick_tasks(n: int) -> list:
    """`n` tasks spread evenly over the whole ordered dataset (every family), loaded client-side as prime-rl does."""
    import verifiers.v1 as vf

    config = vf.resolve_env_config({"taskset": {"id": "websandbox"}})
    every = list(vf.load_taskset(config.taskset))
    n = len(every) if n < 0 else min(n, len(every))
    return [every[i * len(every) // n] for i in range(n)]


async def drive(addresses: list[str], tasks: list, policy_url: str, concurrency: int) -> dict:
    import verifiers.v1 as vf

    from sandbox_env.doors.v1.spread import Spread

    policy = vf.EvalClientConfig(base_url=policy_url, api_key_var=POLICY_KEY_VAR)
    warm = next((t for t in tasks if t.data.task_id.startswith("smoke")), tasks[0])
    async with Spread(addresses, lost_after=120.0) as spread:
        # one episode a server first: each prepares its harness's script environment once
        await asyncio.gather(*(spread.run(warm, policy, "reference", server=a) for a in addresses))
        gate = asyncio.Semaphore(concurrency)

        async def one(task):
            async with gate:
                return await spread.run(task, policy, "reference")

        t0 = time.monotonic()
        outcomes = await asyncio.gather(*(one(t) for t in tasks))
        wall = time.monotonic() - t0
    rewards = [o.reward or 0.0 for o in outcomes]
    return {
        "servers": len(addresses),
        "episodes": len(outcomes),
        "wall": wall,
        "per_second": len(outcomes) / wall,
        "split": dict(Counter(o.server for o in outcomes)),
        "mean_reward": sum(rewards) / len(rewards),
        "errors": Counter(o.error.type for o in outcomes if o.error is not None),
    }


def left_behind(names: list[str]) -> int:
    from sandbox_env.sandbox.docker import docker_client
    from sandbox_env.sandbox.docker.labels import LABEL_SERVER

    api = docker_client().api
    return sum(len(api.containers(all=True, filters={"label": f"{LABEL_SERVER}={n}"})) for n in names)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="1,2", help="server counts to measure, started here (default 1,2)")
    ap.add_argument("--connect", nargs="+", metavar="ADDRESS", help="drive these running env servers instead")
    ap.add_argument("--policy-host", default="127.0.0.1", help="where the servers reach the policy served here")
    ap.add_argument("-n", type=int, default=24, help="episodes (-1: every task once)")
    ap.add_argument("-c", type=int, default=8, help="episodes in flight")
    args = ap.parse_args()

    from sandbox_env.doors.stack import installed_stack
    from sandbox_env.policy.launch import start_policy_server
    from sandbox_env.rollout.image import ensure_image

    if installed_stack() != "v1":
        print("bench/servers.py needs the v1 stack: run it with .venv-v1/bin/python", file=sys.stderr)
        return 2
    os.environ.setdefault(POLICY_KEY_VAR, "local-policy")
    load_before = os.getloadavg()[0]
    image = ensure_image()
    tasks = pick_tasks(args.n)
    policy, url = start_policy_server("reference", None, args.policy_host, 0)
    results = []
    try:
        if args.connect:
            results.append(asyncio.run(drive(args.connect, tasks, url, args.c)) | {"left": None})
        for count in [] if args.connect else [int(x) for x in args.servers.split(",") if x]:
            with tempfile.TemporaryDirectory(prefix="bench-servers-") as logs:
                started = []
                try:
                    for i in range(count):
                        started.append(start_server(image, Path(logs), i))
                    result = asyncio.run(drive([a for _, a, _ in started], tasks, url, args.c))
                finally:
                    for proc, _, _ in started:
                        stop(proc)
                time.sleep(2)
                result["left"] = left_behind([n for _, _, n in started])
                results.append(result)
    finally:
        policy.should_exit = True
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    print(f"\n{len(tasks)} episodes (reference policy), {args.c} in flight, on {os.cpu_count()} cores; {load}")
    print(f"{'servers':>7} {'wall s':>8} {'episodes/s':>10} {'mean reward':>11}  split / errors / containers left")
    for r in results:
        split = " ".join(f"{n}" for n in r["split"].values())
        errors = ", ".join(f"{k} {v}" for k, v in r["errors"].items()) or "none"
        print(
            f"{r['servers']:>7} {r['wall']:>8.1f} {r['per_second']:>10.3f} {r['mean_reward']:>11.3f}  "
            f"{split} / {errors} / {r['left'] if r['left'] is not None else '-'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
