"""Speed and memory of the sandbox, each figure beside its floor measured in the same run.

    python bench/bench.py [--n 20] [--skip-rollouts] [--skip-grading] [--skip-cpu] [--cpu-n 20]

Prints medians (and ratios against the floors): sandbox ready (cold and from the
warm pool) against raw SDK create+start and `docker run --rm IMAGE true`; `bash("true")`
and `execute_code("1")` against raw `docker exec true` through the SDK and the CLI;
grading time per family; reference-rollout throughput at concurrency 1, 8 and 32;
memory of an idle sandbox; then core-seconds per rollout of each family through
`websandbox eval`, beside its floor and with a breakdown (bench/cpu.py).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sandbox_env.image import ensure_image  # noqa: E402
from sandbox_env.sandbox.docker import DockerBackend, docker_client  # noqa: E402
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_CLIENT  # noqa: E402

ROWS: list[tuple[str, str, str]] = []


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


async def amedian_of(fn, n: int) -> float:
    times = []
    for _ in range(n):
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


async def sandbox_figures(backend: DockerBackend, image: str, n: int, floors: dict[str, float]) -> None:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sid = await backend.create(image)
        times.append(time.perf_counter() - t0)
        await backend.delete(sid)
    cold = statistics.median(times)
    record("sandbox ready, cold (create+start+agent)", ms(cold), f"{cold / floors['sdk_create_start']:.2f}x raw SDK create+start")

    pool = backend.warm_pool(image, 4)
    await pool.start()
    await pool.wait_full(timeout=120)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        sid = await pool.acquire()
        times.append(time.perf_counter() - t0)
        await backend.delete(sid)
        await pool.wait_full(timeout=120)
    record("sandbox ready, from the warm pool", ms(statistics.median(times)), "")
    await pool.stop()

    async with backend.sandbox(image) as sb:
        sid = sb.id
        await sb.start_python()
        bash = await amedian_of(lambda: sb.exec("true"), n * 5)
        code = await amedian_of(lambda: sb.run_python("1"), n * 5)
        ratio_sdk = bash / floors["sdk_exec_true"]
        ratio_cli = floors["cli_exec_true"] / bash
        record("bash('true') round trip", ms(bash), f"{ratio_sdk:.2f}x SDK exec, {ratio_cli:.1f}x faster than CLI exec")
        record("execute_code('1') round trip", ms(code), "")
        await asyncio.sleep(1)
        stats = docker_client().api.stats(sid, stream=False)
        mem = stats["memory_stats"].get("usage", 0) - stats["memory_stats"].get("stats", {}).get("inactive_file", 0)
        record("memory of an idle sandbox (agent + session)", f"{mem / 2**20:.1f} MiB", "")


async def grading_figures(backend: DockerBackend, image: str, n: int) -> None:
    """Median time to grade a reference's final state: cold, and with the grader prewarmed."""
    from sandbox_env.families import grade_final
    from sandbox_env.grading import Grader
    from sandbox_env.verify import reference_calls
    from sandbox_env.verify.compile import compile_all
    from sandbox_env.verify.scripted import scripted_rollout

    rows = compile_all()
    warm = Grader(backend, image, prewarm=1)
    for family in ("orm", "fastapi", "django"):
        tasks = [r for r in rows if r.family == family][: max(3, n // 2)]
        finals = []
        for task in tasks:
            run = await scripted_rollout(backend, image, task, reference_calls(family, task.task_id))
            finals.append((task, run.final))
        cold, hot = [], []
        for task, final in finals:
            t0 = time.perf_counter()
            g1 = await grade_final(task, final, Grader(backend, image))
            cold.append(time.perf_counter() - t0)
            await warm.wait_warm(timeout=120)
            t0 = time.perf_counter()
            g2 = await grade_final(task, final, warm)
            hot.append(time.perf_counter() - t0)
            assert g1.score == g2.score == 1.0, (task.task_id, g1.reason, g2.reason)
        record(
            f"grading, {family}, prewarmed (median of {len(hot)})",
            ms(statistics.median(hot)),
            f"cold: {ms(statistics.median(cold))}",
        )
    await warm.stop()


async def throughput(backend: DockerBackend, image: str, total: int) -> None:
    from sandbox_env.grading import Grader
    from sandbox_env.sandbox.pool import default_pool_size
    from sandbox_env.verify import reference_calls
    from sandbox_env.verify.compile import compile_all
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
        await sandbox_figures(backend, image, args.n, floors)
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
