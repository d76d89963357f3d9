"""Speed and memory of the sandbox, each figure beside its floor measured in the same run.

    python bench/bench.py [--n 20] [--skip-calls] [--skip-rollouts] [--skip-grading] [--skip-peer] [--skip-cpu] [--cpu-n 20]

Prints medians (and ratios against the floors): sandbox ready (cold and from the
warm pool) against raw SDK create+start and `docker run --rm IMAGE true`; `bash("true")`
and `execute_code("1")` against raw `docker exec true` through the SDK and the CLI, and
the breakdown of one call (host side CPU, channel, agent, the command itself); the peer
side by side: verifiers 0.4's DockerRuntime on the same image (bench/peer.py, run with
the verifiers 0.4 venv's Python: .venv-v1, `make setup-v1`; `--peer-python` names
another) with the ratio per call; grading time per family; reference-rollout throughput at concurrency 1, 8 and 32;
memory of an idle sandbox; then core-seconds per rollout of each family through
`websandbox eval`, beside its floor and with a breakdown (bench/cpu.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sandbox_env.constants import CONTAINER_PYTHON, CONTAINER_RUNTIME  # noqa: E402
from sandbox_env.rollout.image import ensure_image  # noqa: E402
from sandbox_env.sandbox.docker import DockerBackend, docker_client  # noqa: E402
from sandbox_env.sandbox.docker.host_tree import SWITCH, HostTrees, wanted  # noqa: E402
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_CLIENT  # noqa: E402

ROWS: list[tuple[str, str, str]] = []
# seconds a pool may take to fill: the container budget is shared by every user of the engine on this host
POOL_WAIT = 600


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def record(name: str, value: str, note: str = "") -> None:
    ROWS.append((name, value, note))
    print(f"  {name:<44} {value:>14}  {note}", flush=True)


def median_of(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def amedian_of(fn, n: int, pause: float = 0.0) -> float:
    """Median wall time of `fn`; `pause` seconds between calls are not counted."""
    times = []
    for _ in range(n):
        if pause:
            await asyncio.sleep(pause)
        t0 = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def raw_floors(image: str, n: int) -> dict[str, float]:
    dc = docker_client()
    out: dict[str, float] = {}

    def sdk_create_start():
        c = dc.containers.create(image, ["sleep", "infinity"], network_mode="none", labels={LABEL: "bench"}, init=True)
        c.start()
        sdk_create_start.last = c

    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sdk_create_start()
        times.append(time.perf_counter() - t0)
        sdk_create_start.last.remove(force=True)
    out["sdk_create_start"] = statistics.median(times)
    out["cli_run_true"] = median_of(
        lambda: subprocess.run(["docker", "run", "--rm", "--network", "none", image, "true"], check=True), max(5, n // 2)
    )
    c = dc.containers.create(image, ["sleep", "infinity"], network_mode="none", labels={LABEL: "bench"}, init=True)
    c.start()
    try:
        out["sdk_exec_true"] = median_of(lambda: c.exec_run(["true"]), n)
        out["cli_exec_true"] = median_of(lambda: subprocess.run(["docker", "exec", c.id, "true"], check=True), n)
    finally:
        c.remove(force=True)
    return out


async def cold_start(backend: DockerBackend, image: str, n: int) -> float:
    """Median seconds from create to a ready sandbox (the agent's first reply), over n fresh sandboxes."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sid = await backend.create(image)
        times.append(time.perf_counter() - t0)
        await backend.delete(sid)
    return statistics.median(times)


async def sandbox_figures(backend: DockerBackend, image: str, n: int, floors: dict[str, float]) -> dict[str, float]:
    cold = await cold_start(backend, image, n)
    record("sandbox ready, cold (create+start+agent)", ms(cold), f"{cold / floors['sdk_create_start']:.2f}x raw SDK create+start")
    await cold_without_host_tree(image, n, floors)
    cold_start_parts(image, n)

    pool = backend.warm_pool(image, 4)
    await pool.start()
    await pool.wait_full(timeout=POOL_WAIT)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sid = await pool.acquire()
        times.append(time.perf_counter() - t0)
        await backend.delete(sid)
        await pool.wait_full(timeout=POOL_WAIT)
    warm = statistics.median(times)
    record("sandbox ready, from the warm pool", ms(warm), "")
    await pool.stop()

    async with backend.sandbox(image) as sb:
        sid = sb.id
        await sb.start_python()
        bash = await amedian_of(lambda: sb.exec("true"), n * 5)
        code = await amedian_of(lambda: sb.run_python("1"), n * 5)
        ratio_sdk = bash / floors["sdk_exec_true"]
        ratio_cli = floors["cli_exec_true"] / bash
        record("bash('true') round trip", ms(bash), f"{ratio_sdk:.2f}x SDK exec, {ratio_cli:.1f}x faster than CLI exec")
        # between a model's turns the agent has started the next standby shell (runtime/container/standby.py)
        apart = await amedian_of(lambda: sb.exec("true"), n * 5, pause=STANDBY_PAUSE)
        record(f"bash('true') round trip, calls {STANDBY_PAUSE * 1000:.0f} ms apart", ms(apart), "target <= 8 ms")
        record("execute_code('1') round trip", ms(code), "")
        await call_breakdown(backend, sb, n * 5)
        await asyncio.sleep(1)
        stats = docker_client().api.stats(sid, stream=False)
        mem = stats["memory_stats"].get("usage", 0) - stats["memory_stats"].get("stats", {}).get("inactive_file", 0)
        record("memory of an idle sandbox (agent + session)", f"{mem / 2**20:.1f} MiB", "")
    return {"cold": cold, "pool": warm, "bash": bash, "code": code}


async def cold_without_host_tree(image: str, n: int, floors: dict[str, float]) -> None:
    """The cold start with the image's folders read through the storage driver (docker/host_tree.py off)."""
    if wanted(docker_client()) is not None:
        return
    os.environ[SWITCH] = "0"
    backend = DockerBackend()
    try:
        cold = await cold_start(backend, image, n)
    finally:
        del os.environ[SWITCH]
        backend.teardown()
    record("  the same, image folders through the driver", ms(cold), f"{cold / floors['sdk_create_start']:.2f}x ({SWITCH}=0)")


# what a fresh container runs in each rung of the cold start's ladder (the sandbox's hardened spec, its user)
COLD_LADDER = (
    ("a container that runs `true`", ["true"]),
    ("+ the first Python of the container (`python -S -c pass`)", [CONTAINER_PYTHON, "-S", "-c", "pass"]),
    (
        "+ the agent's imports and set-up (no request)",
        [CONTAINER_PYTHON, "-S", "-c", f"import sys; sys.path.insert(0, {CONTAINER_RUNTIME!r}); import agent"],
    ),
)


def cold_start_parts(image: str, n: int) -> None:
    """The cold start taken apart: fresh containers of the sandbox's spec run to their exit, each rung one
    more step of what the agent does before its first reply, so the differences are those steps' costs
    in a container that has read nothing through its file server yet."""
    from sandbox_env.constants import SANDBOX_USER, WORKSPACE
    from sandbox_env.sandbox.docker.spec import container_spec
    from sandbox_env.sandbox.types import Limits

    dc = docker_client()
    source, mounts = HostTrees(dc).for_image(image)  # the sandbox's own root: its folders from the host where served
    base = None
    for name, argv in COLD_LADDER:
        times = []
        for _ in range(n):
            spec = container_spec(source, Limits(), {LABEL: "bench"}, "bench", mounts=mounts)
            spec.update(command=argv, stdin_open=False, user=SANDBOX_USER, working_dir=WORKSPACE, cap_add=[], auto_remove=False)
            spec.pop("detach", None)
            t0 = time.perf_counter()
            c = dc.containers.create(**spec)
            try:
                c.start()
                status = c.wait(timeout=120)
                times.append(time.perf_counter() - t0)
            finally:
                c.remove(force=True)
            if status.get("StatusCode") != 0:
                raise RuntimeError(f"{name}: {argv} exited with {status}")
        median = statistics.median(times)
        step = "" if base is None else f"+{(median - base) * 1000:.1f} ms over the rung above"
        record(f"  cold start ladder: {name}", ms(median), step)
        base = median


# seconds between a prewarmed pool's refill and the grading timed on it: its grader program's imports
# are done, as they are when a rollout (seconds of turns) ends after the pool last handed one out
PREWARM_SETTLE = 2.0
STANDBY_PAUSE = 0.05  # seconds between bash calls in the breakdown: a model's turn is longer
PEER_TARGET = 10.0  # times faster per call than the peer (the target)
# ms per grading, prewarmed and cold, over a family's single-feature tasks (the targets)
GRADING_TARGETS = {"fastapi": (700, 1500), "django": (1200, 2500)}


def peer_figures(image: str, n: int, ours: dict[str, float], python: Path) -> None:
    """verifiers 0.4's DockerRuntime on the same image, beside websandbox's figures of this run."""
    if not python.exists():
        record("peer (verifiers 0.4 DockerRuntime)", "skipped", f"no {python}: `make setup-v1`, or --peer-python")
        return
    done = subprocess.run(
        [str(python), str(Path(__file__).resolve().parent / "peer.py"), image, str(n)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        record("peer (verifiers 0.4 DockerRuntime)", "failed", done.stderr.strip().splitlines()[-1][:120])
        return
    peer = json.loads(done.stdout.strip().splitlines()[-1])
    print("peer side by side (verifiers 0.4 DockerRuntime: one `docker` CLI call per operation; same image, same run):")
    record(
        "peer start() / websandbox cold start",
        f"{ms(peer['start'])} / {ms(ours['cold'])}",
        f"{peer['start'] / ours['cold']:.1f}x faster; from the warm pool {ms(ours['pool'])}",
    )
    for name, theirs, mine in (
        ("peer run(['true']) / bash('true')", peer["run_true"], ours["bash"]),
        ("peer run(['python','-c','1']) / execute_code('1')", peer["run_python"], ours["code"]),
    ):
        ratio = theirs / mine
        verdict = "meets" if ratio >= PEER_TARGET else "below"
        record(name, f"{ms(theirs)} / {ms(mine)}", f"{ratio:.1f}x faster per call ({verdict} the {PEER_TARGET:g}x target)")


# Timed inside the container by the session (uid 1000, as the agent's children): the command alone, no agent.
COMMAND_ALONE = """
import subprocess, statistics, time
def _alone(n):
    bash, cell = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(["/bin/bash", "-c", "true"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        bash.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        exec(compile("1", "<cell>", "exec"), {})
        cell.append(time.perf_counter() - t0)
    return statistics.median(bash), statistics.median(cell)
"""


async def call_breakdown(backend: DockerBackend, sb, n: int) -> dict[str, float]:
    """Where one call's time goes: host side CPU, the channel, the agent, the command itself.

    - host side CPU: this process's CPU time per call (event loop, worker thread, backend,
      channel), from `time.process_time`;
    - channel: the round trip of a `ping` (host, engine, the agent's smallest reply);
    - the command: `bash -c true` started from Python, and the cell `1` compiled and run,
      each timed inside the container with no agent around it; bash calls are STANDBY_PAUSE
      apart, as a model's turns are, so the agent's standby shell (runtime/container/standby.py)
      has started and bash's start is off the call's path (printed as paid between calls);
    - agent: what is left (its request handling, spawning, the clock, the session's pipe);
    - beside them, the CPU the calls cost the sandbox's cgroup and the host process that
      serves its root filesystem (fuse-overlayfs, when the engine's storage uses it), both
      means over the same calls: CPU, unlike wall time, does not grow with the load.
    Each is a median; the parts are medians of different runs, so they add up only roughly.
    """

    async def per_call(fn, pause: float = 0.0) -> tuple[float, float]:
        wall, cpu = [], []
        for _ in range(n):
            if pause:
                await asyncio.sleep(pause)
            c0, t0 = time.process_time(), time.perf_counter()
            await fn()
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        return statistics.median(wall), statistics.median(cpu)

    def sandbox_cpu(before, after) -> tuple[float | None, float | None]:
        """CPU per call of the sandbox's cgroup and of the host process serving its root filesystem."""

        def per(a, b):
            return None if a is None or b is None else (b - a) / n

        if before is None or after is None:
            return None, None
        return per(before.cpu, after.cpu), per(before.served, after.served)

    ping, _ = await per_call(lambda: backend.call(sb.id, {"op": "ping"}, 30))
    await sb.run_python(COMMAND_ALONE)
    printed = (await sb.run_python(f"print(*_alone({n}))", timeout=120)).output
    bash_alone, cell_alone = (float(x) for x in printed.split())
    out = {"ping": ping}
    apart = f"bash calls {STANDBY_PAUSE * 1000:.0f} ms apart"
    print(f"  breakdown of one call (medians; agent = round trip - channel - command; {apart}):", flush=True)
    for name, fn, alone_s, what, pause in (
        ("bash('true')", lambda: sb.exec("true"), bash_alone, "`bash -c true` started from Python", STANDBY_PAUSE),
        ("execute_code('1')", lambda: sb.run_python("1"), cell_alone, "the cell compiled and run", 0.0),
    ):
        before = backend.usage_point(sb.id)
        wall, cpu = await per_call(fn, pause)
        box_cpu, served = sandbox_cpu(before, backend.usage_point(sb.id))
        agent = max(0.0, wall - ping - (0.0 if pause else alone_s))
        record(f"  {name} round trip", ms(wall), "")
        record("    host side CPU (this process)", ms(cpu), "")
        record("    sandbox CPU (its cgroup: agent + command)", "n/a" if box_cpu is None else ms(box_cpu), "mean")
        record(
            "    file server CPU (its root filesystem's)",
            "n/a" if served is None else ms(served),
            "mean; fuse-overlayfs: one round trip per file the command opens or stats",
        )
        record("    channel (a ping's round trip)", ms(ping), "host, engine, the agent's smallest reply")
        record("    agent (the rest)", ms(agent), "request handling, spawn, clock, session pipe")
        if pause:  # the standby shell started between calls: bash's start is off the call's path
            record("    bash's start, paid between calls", ms(alone_s), f"{what}, timed in the container")
        else:
            record("    the command itself", ms(alone_s), f"{what}, timed in the container")
        out[name] = wall
    return out


def _is_composed(row) -> bool:
    return (row.measures or {}).get("tier") == "composed"


async def grading_figures(backend: DockerBackend, image: str, n: int) -> None:
    """Median time to grade a reference's final state: cold, and with the grader prewarmed.

    Per family over its first single-feature tasks (the set the targets were set on), and for
    fastapi and django over their first composed tasks too (three to five features in one app,
    so about twice the sessions or tests), each its own row.
    """
    from sandbox_env.grading.grader import Grader
    from sandbox_env.stages.compile import compile_all

    rows = compile_all()
    warm = Grader(backend, image, prewarm=1)
    for family in ("orm", "fastapi", "django"):
        mine = [r for r in rows if r.family == family]
        kinds = [("", [r for r in mine if not _is_composed(r)][: max(3, n // 2)])]
        if family != "orm":
            kinds.append((" composed", [r for r in mine if _is_composed(r)][:3]))
        for label, tasks in kinds:
            if tasks:
                await _grading_row(backend, image, warm, f"{family}{label}", tasks)
    await warm.stop()


async def _grading_row(backend: DockerBackend, image: str, warm, name: str, tasks: list) -> None:
    from sandbox_env.families import grade_final
    from sandbox_env.grading.grader import Grader
    from sandbox_env.verify import reference_calls
    from sandbox_env.verify.scripted import scripted_rollout

    finals = []
    for task in tasks:
        run = await scripted_rollout(backend, image, task, reference_calls(task.family, task.task_id))
        finals.append((task, run.final))
    cold, hot = [], []
    await grade_final(*finals[0], warm)  # untimed: the family's pool is made by its first grading
    for task, final in finals:
        t0 = time.perf_counter()
        g1 = await grade_final(task, final, Grader(backend, image))
        cold.append(time.perf_counter() - t0)
        await warm.wait_warm(timeout=POOL_WAIT)
        await asyncio.sleep(PREWARM_SETTLE)  # a full pool's grader may still be importing
        t0 = time.perf_counter()
        g2 = await grade_final(task, final, warm)
        hot.append(time.perf_counter() - t0)
        assert g1.score == g2.score == 1.0, (task.task_id, g1.reason, g2.reason)
    target = GRADING_TARGETS.get(name)
    note = f"cold: {ms(statistics.median(cold))}"
    if target:
        note += f"  (targets: {target[0]:g} ms prewarmed, {target[1]:g} ms cold)"
    record(f"grading, {name}, prewarmed (median of {len(hot)}; imports done)", ms(statistics.median(hot)), note)


async def throughput(backend: DockerBackend, image: str, total: int) -> None:
    from sandbox_env.grading.grader import Grader
    from sandbox_env.sandbox.pool import default_pool_size
    from sandbox_env.stages.compile import compile_all
    from sandbox_env.verify import reference_calls
    from sandbox_env.verify.scripted import scripted_rollout

    by_family: dict[str, list] = {}
    for r in compile_all():
        if r.family != "smoke":
            by_family.setdefault(r.family, []).append(r)
    # the same interleaved mix of families at every level, so that the levels compare
    rows = [fam[i % len(fam)] for i in range(total) for fam in by_family.values()][:total]
    size = default_pool_size()  # as load_environment does
    backend.keep_warm(image, size)
    grader = Grader(backend, image, prewarm=max(1, size // 2) if size > 0 else 0)
    base = None
    for conc in (1, 8, 32):
        sem = asyncio.Semaphore(conc)
        picked = rows

        async def one(task, sem=sem):
            async with sem:
                calls = reference_calls(task.family, task.task_id)
                return await scripted_rollout(backend, image, task, calls, grader=grader)

        t0 = time.perf_counter()
        runs = await asyncio.gather(*(one(t) for t in picked))
        rate = len(picked) / (time.perf_counter() - t0)
        errors = sum(1 for r in runs if r.grade.scoring_error)
        base = base or rate
        record(
            f"reference rollouts/s at concurrency {conc}",
            f"{rate:.2f}/s",
            f"{rate / base:.2f}x c=1; {errors} harness errors; mean score {statistics.mean(r.grade.score for r in runs):.3f}",
        )
    await backend.stop_pools()
    await grader.stop()
    await asyncio.sleep(2)  # background removals of grading containers
    left = len(docker_client().api.containers(all=True, filters={"label": f"{LABEL_CLIENT}={backend.client_id}"}))
    record("containers left after the rollouts (pools stopped)", str(left), "")


async def main_async(args: argparse.Namespace) -> None:
    image = ensure_image()
    print(f"image {image}; n={args.n}\nfloors (raw Docker, same run):", flush=True)
    floors = raw_floors(image, args.n)
    labels = {
        "sdk_create_start": "raw SDK create+start",
        "cli_run_true": "raw `docker run --rm IMAGE true`",
        "sdk_exec_true": "raw SDK exec_run(['true'])",
        "cli_exec_true": "raw CLI `docker exec C true`",
    }
    for key, label in labels.items():
        record(label, ms(floors[key]), "floor")
    print("websandbox:", flush=True)
    backend = DockerBackend()
    try:
        ours = None if args.skip_calls else await sandbox_figures(backend, image, args.n, floors)
        if ours is not None and not args.skip_peer:
            await asyncio.to_thread(peer_figures, image, args.n, ours, args.peer_python)
        if not args.skip_grading:
            await grading_figures(backend, image, args.n)
        if not args.skip_rollouts:
            await throughput(backend, image, args.rollouts)
    finally:
        backend.teardown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20, help="repetitions per figure (default 20)")
    ap.add_argument("--rollouts", type=int, default=64, help="rollouts per throughput level (default 64)")
    ap.add_argument("--skip-rollouts", action="store_true")
    ap.add_argument("--skip-calls", action="store_true", help="skip sandbox start, pool, tool calls (and so the peer)")
    ap.add_argument("--skip-peer", action="store_true", help="skip verifiers 0.4's DockerRuntime (bench/peer.py)")
    ap.add_argument(
        "--peer-python",
        type=Path,
        default=Path(__file__).resolve().parents[1] / ".venv-v1" / "bin" / "python",
        help="a Python with verifiers 0.4 installed (default: the checkout's .venv-v1)",
    )
    ap.add_argument("--skip-grading", action="store_true")
    ap.add_argument("--skip-cpu", action="store_true", help="skip core-seconds per rollout (bench/cpu.py)")
    ap.add_argument("--cpu-n", type=int, default=20, help="tasks per family for the CPU figures (default 20)")
    args = ap.parse_args()
    asyncio.run(main_async(args))
    if not args.skip_cpu:
        import cpu

        print("core-seconds per rollout (bench/cpu.py):", flush=True)
        cpu.measure(
            argparse.Namespace(
                families=",".join(cpu.FAMILIES), n=args.cpu_n, c=2, tree=cpu.HERE.parent, reps=3, logs=Path("/tmp"), pycache=None
            )
        )


if __name__ == "__main__":
    main()
