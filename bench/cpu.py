"""Core-seconds per rollout of each family through `websandbox eval`, each beside its floor from the same run.

    python bench/cpu.py [--families orm,fastapi,django] [-n 20] [-c 2] [--tree PATH] [--json FILE] [--no-bytecode]

What it runs is what a user runs: `websandbox eval --family F -c C -n N` (the reference
policy served on loopback, the real vf-eval, the environment as `load_environment`
builds it with its defaults), once with one smoke task for the start-up, once per
family. `--tree PATH` runs the `websandbox` of another checkout (for before/after).

CPU comes from accounting that belongs to the run (cpuacct.py), never from wall time:
the host processes (the exact `RUSAGE_CHILDREN` delta of `websandbox eval` and all it
started: vf-eval, its env-server processes) plus every container of the run (cgroup,
containerd-shim with runc, fuse-overlayfs). `dockerd`/`containerd` are shared with every
other user of the engine, so their delta is shown beside, not inside; so is the
machine-wide `/proc/stat` figure, which is the one to read on a quiet machine.

Per rollout = (family run - one-smoke-task run) / N, as the issue measures it.
Floors (floors.py): the containers the family needs, each running only its share of the
reference's work, for the same N tasks, measured just before and just after the family's
run and averaged: on a machine that others load, CPU time per unit of work grows with
the load, and a floor taken under another load than its run would skew the ratio. Time to first rollout: from the command to the
first rollout's start in vf-eval's own timing, and the CPU the run had used by then (on
a quiet machine the start-up chain runs one process at a time, so wall is about that).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import floors  # noqa: E402
from cpuacct import Meter  # noqa: E402

from sandbox_env.dataset import load_rows, select_rows  # noqa: E402
from sandbox_env.families.base import TaskRow  # noqa: E402
from sandbox_env.rollout.image import ensure_image  # noqa: E402
from sandbox_env.sandbox.docker import docker_client  # noqa: E402

FAMILIES = ("orm", "fastapi", "django")
KINDS = ("rollout", "grader", "unused pool", "unused grader")


@dataclass
class Run:
    """One `websandbox eval` as the meter saw it."""

    name: str
    rollouts: int
    own: float  # host processes (reaped) + containers
    host: float
    containers: dict[str, float]  # by kind
    parts: dict[str, float]  # engine helpers, FUSE, in-container processes by class, by kind
    counts: dict[str, int]
    engine_shared: float
    machine: float
    wall: float
    host_by_name: dict[str, float]
    first_rollout: float | None = None  # seconds from the command
    first_rollout_cpu: float | None = None  # host CPU used by then
    rewards: list[float] = field(default_factory=list)
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average at the run's start and end
    host_during: float = 0.0  # host CPU from the first rollout's start to the last one's end
    detail: list[dict] = field(default_factory=list)  # per container: kind, replies, CPU by part


def child_env(tree: Path, pycache: Path | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{tree}:{tree / 'environments' / 'websandbox'}"}
    if pycache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def compile_bytecode(tree: Path, pycache: Path) -> None:
    """Bytecode for the venv and the tree under `pycache`, as an install with compiled bytecode has it."""
    import sysconfig

    dirs = [sysconfig.get_paths()["purelib"], str(tree / "sandbox_env"), str(tree / "environments")]
    env = child_env(tree, pycache)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *dirs], env=env, stdout=subprocess.DEVNULL)


def cpu_of(argv: list[str], env: dict[str, str]) -> float:
    """Core-seconds of a host command and everything it started (all reaped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compile_stdlib(pycache: Path) -> None:
    """Bytecode of the standard library under `pycache`: an install without bytecode still has the stdlib's."""
    import sysconfig

    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(pycache)}
    argv = [sys.executable, "-m", "compileall", "-q", "-j", "0", "-x", "site-packages", sysconfig.get_paths()["stdlib"]]
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def startup_floor(tree: Path, pycache: Path | None) -> float:
    """The least a start-up can cost: one process importing vf-eval and what a SandboxEnv subclass needs."""
    code = "from verifiers.legacy.scripts.eval import main\nimport verifiers as vf\nvf.SandboxEnv"
    return min(cpu_of([sys.executable, "-c", code], child_env(tree, pycache)) for _ in range(2))


def run_eval(tree: Path, family: str, n: int, concurrency: int, log: Path, driver: str, pycache: Path | None = None) -> Run:
    exe = Path(sys.executable).with_name("websandbox")
    env = child_env(tree, pycache)
    cmd = [str(exe), "eval", "--family", family, "-c", str(concurrency), "-n", str(n)]
    load0 = os.getloadavg()[0]
    with log.open("w") as out, Meter(driver=driver) as m:
        t0 = time.time()
        code = subprocess.run(cmd, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    load = (load0, os.getloadavg()[0])
    if code != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed (exit {code}); its output is in {log}")
    results = _results_since(tree, t0)
    mine = m.mine()
    containers = {k: sum(c.total for c in mine if c.kind == k) for k in KINDS}
    counts = {k: sum(1 for c in mine if c.kind == k) for k in KINDS}
    parts: dict[str, float] = {}
    for c in mine:
        parts[f"{c.kind}: shim and runc"] = parts.get(f"{c.kind}: shim and runc", 0.0) + c.shim
        parts[f"{c.kind}: fuse-overlayfs"] = parts.get(f"{c.kind}: fuse-overlayfs", 0.0) + c.fuse
        inside = c.total - c.shim - c.fuse
        by_class = c.by_class()
        seen = sum(by_class.values()) or 1.0
        for cls, secs in by_class.items():  # scaled so the classes add up to what the container used
            key = f"{c.kind}: {cls}"
            parts[key] = parts.get(key, 0.0) + inside * secs / seen
    starts = [r["timing"]["start_time"] for r in results if r.get("timing")]
    first = min(starts) if starts else None
    ends = [r["timing"]["start_time"] + r["timing"]["total"] for r in results if r.get("timing")]
    host_during = m.host_cpu_at(max(ends)) - m.host_cpu_at(first) if starts and ends else 0.0
    return Run(
        name=family,
        rollouts=len(results),
        own=m.reaped + m.detached_cpu() + sum(containers.values()),
        host=m.reaped + m.detached_cpu(),
        containers=containers,
        parts=parts,
        counts=counts,
        engine_shared=sum(m.engine_shared.values()),
        machine=m.machine,
        wall=m.wall,
        host_by_name=m.host_by_name(),
        first_rollout=None if first is None else first - t0,
        first_rollout_cpu=None if first is None else m.host_cpu_at(first),
        host_during=host_during,
        rewards=[float(r.get("reward") or 0.0) for r in results],
        load=load,
        detail=[
            {
                "id": c.cid[:12],
                "kind": c.kind,
                "role": c.role,
                "total": round(c.total, 3),
                "shim": round(c.shim, 3),
                "fuse": round(c.fuse, 3),
                "classes": {k: round(v, 3) for k, v in c.by_class().items()},
            }
            for c in mine
        ],
    )


def mean_run(runs: list[Run]) -> Run:
    """The figures per_rollout and breakdown subtract, averaged over several runs of the same command."""
    k = len(runs)
    first = runs[0]
    return Run(
        name=first.name,
        rollouts=first.rollouts,
        own=sum(r.own for r in runs) / k,
        host=sum(r.host for r in runs) / k,
        containers={n: sum(r.containers[n] for r in runs) / k for n in first.containers},
        parts=first.parts,
        counts=first.counts,
        engine_shared=sum(r.engine_shared for r in runs) / k,
        machine=sum(r.machine for r in runs) / k,
        wall=sum(r.wall for r in runs) / k,
        host_by_name=first.host_by_name,
    )


def _results_since(tree: Path, t0: float) -> list[dict]:
    found = [p for p in tree.glob("**/outputs/evals/*--reference/*/results.jsonl") if p.stat().st_mtime >= t0]
    if not found:
        raise RuntimeError(f"no results.jsonl written under {tree} since the run started")
    newest = max(found, key=lambda p: p.stat().st_mtime)
    return [json.loads(line) for line in newest.read_text().splitlines() if line.strip()]


def tasks_of(family: str, n: int) -> list[TaskRow]:
    """The first n tasks of the family, in the order vf-eval's `-n` takes them."""
    return [TaskRow.from_info(r["info"]) for r in select_rows(load_rows(), family=family)[:n]]


def per_rollout(run: Run, start: Run) -> dict[str, float]:
    """Per rollout: the run minus the one-task start-up (the issue's way), and `within`: the run's containers
    plus its host CPU while rollouts ran, which subtracts nothing measured at another time (nor its load)."""
    n = max(run.rollouts, 1)
    return {
        "own": (run.own - start.own) / n,
        "within": (sum(run.containers.values()) + run.host_during) / n,
        "engine_shared": (run.engine_shared - start.engine_shared) / n,
        "machine": (run.machine - start.machine) / n,
        "host": (run.host - start.host) / n,
    }


def breakdown(run: Run, start: Run, floor: dict[str, float]) -> dict[str, float]:
    """Where a rollout's core-seconds go, per rollout: by process, then each container against its floor."""
    n = max(run.rollouts, 1)
    p = run.parts

    def total(*suffixes: str, kinds: tuple[str, ...] = ("rollout", "grader")) -> float:
        return sum(v for k, v in p.items() if k.split(": ")[0] in kinds and k.split(": ")[1] in suffixes) / n

    out = {
        "engine helpers (containerd-shim, runc) of used containers": total("shim and runc"),
        "FUSE (fuse-overlayfs) of used containers": total("fuse-overlayfs"),
        "rollout container: docker-init and agent": total("init", "agent", kinds=("rollout",)),
        "rollout container: Python session": total("session", kinds=("rollout",)),
        "rollout container: tool commands (the reference's own work)": total("tool", "reaped and unsampled", kinds=("rollout",)),
        "grading container: docker-init and agent": total("init", "agent", "tool", kinds=("grader",)),
        # a grading container's short-lived processes are the grader's (forked app processes)
        "grading container: grader program (imports, canaries, checks)": total(
            "grader", "reaped and unsampled", kinds=("grader",)
        ),
        "containers started and never used (pool refills, prewarmed graders, refused starts)": (
            run.containers["unused pool"] + run.containers["unused grader"]
        )
        / n,
        "host: vf-eval, env server, policy server (past start-up)": (run.host - start.host) / n,
    }
    out["of which Python imports (floor's import figure x containers importing)"] = floor["imports"] * (
        1 if run.name == "orm" else 2
    )
    rollout, grading = run.containers["rollout"] / n, run.containers["grader"] / n
    out["rollout container, all in (FUSE, shim, agent, session, tools)"] = rollout
    out["  its floor: one container running the reference's own work"] = floor["rollout_share"]
    if floor["containers"] > 1:
        out["grading container, all in"] = grading
        out["  its floor: one container running the reference's grading work"] = floor["grading_share"]
        out["  the real grader program alone (no agent), its request as a grade sends it"] = floor["grader_alone"]
        out["  so: the grader's design beyond the floor (process separation, guard, canaries)"] = (
            floor["grader_alone"] - floor["grading_share"]
        )
        out["  so: the harness's own work in it (agent, spawn and feed, file writes)"] = grading - floor["grader_alone"]
    if floor.get("canaries"):
        out["  of the grader's design: the canary tests (django)"] = floor["canaries"]
    return out


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a floor's container is removed on the way out
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated; empty: the start-up only")
    ap.add_argument("-n", type=int, default=20, help="tasks per family (default 20; django has 10)")
    ap.add_argument("-c", type=int, default=2, help="vf-eval concurrency (default 2)")
    ap.add_argument("--tree", type=Path, default=HERE.parent, help="the checkout whose websandbox runs")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the lifecycle and import floors")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--logs", type=Path, default=Path("/tmp"), help="where each run's output goes")
    ap.add_argument(
        "--pycache-prefix",
        type=Path,
        dest="pycache",
        help="compile bytecode for the venv and the tree into this folder and run with "
        "PYTHONPYCACHEPREFIX set to it: what an install with compiled bytecode gives, on a "
        "machine where PYTHONDONTWRITEBYTECODE=1 and the venv has no .pyc files",
    )
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="run `websandbox eval` as an install without compiled bytecode runs where PYTHONDONTWRITEBYTECODE=1 "
        "(every import compiles: PYTHONPYCACHEPREFIX points at an empty folder); the floors keep the bytecode",
    )
    args = ap.parse_args()
    figures = measure(args)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


def measure(args: argparse.Namespace) -> dict:
    families = [f for f in args.families.split(",") if f]
    driver = docker_client().info().get("Driver", "")
    tree = args.tree.resolve()
    image = ensure_image()
    print(
        f"tree {tree}; image {image}; storage driver {driver}; load {os.getloadavg()[0]:.1f}; "
        f"bytecode: {'none (--no-bytecode)' if getattr(args, 'no_bytecode', False) else bytecode_state(args.pycache)}; "
        f"checkout compiled: {any((tree / 'sandbox_env').glob('__pycache__/*.pyc'))}",
        flush=True,
    )
    if args.pycache is not None:
        compile_bytecode(tree, args.pycache)
    floor = startup_floor(tree, args.pycache)
    pycache = args.pycache
    if getattr(args, "no_bytecode", False):  # the floors above keep the bytecode: they are the least cost
        import tempfile

        pycache = Path(tempfile.mkdtemp(prefix="cpu-bench-no-bytecode-"))
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        compile_stdlib(pycache)
    starts = []
    for i in range(2):  # the start-up is subtracted from every family's run: its noise is divided by N only
        starts.append(run_eval(tree, "smoke", 1, args.c, args.logs / f"cpu-bench-smoke-{i}.log", driver, pycache))
        show_start(starts[-1], floor)
    start = mean_run(starts)
    print(f"start-up, the mean of the two: {start.own:.1f} core-s of its own (host {start.host:.1f})", flush=True)
    figures: dict = {"start": start.__dict__, "starts": [s.__dict__ for s in starts], "startup_floor": floor, "families": {}}
    for family in families:
        tasks = tasks_of(family, args.n)
        with Meter(driver=driver) as m:
            before = floors.measure(image, m, {family: tasks}, reps=args.reps)[family]
        run = run_eval(tree, family, len(tasks), args.c, args.logs / f"cpu-bench-{family}.log", driver, pycache)
        with Meter(driver=driver) as m:
            after = floors.measure(image, m, {family: tasks}, reps=args.reps)[family]
        floor = {k: (before[k] + after[k]) / 2 for k in before}  # a load that changed during the run moves both alike
        print(f"  floor: {family}: {floor['floor']:.3f} core-s per task, the mean of the measurements before and after the run")
        row = {
            "run": run.__dict__,
            "floor": floor,
            "per_rollout": per_rollout(run, start),
            "breakdown": breakdown(run, start, floor),
        }
        figures["families"][family] = row
        show_family(family, row)
    return figures


def bytecode_state(pycache: Path | None) -> str:
    if pycache is not None:
        return f"compiled under {pycache} (PYTHONPYCACHEPREFIX)"
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        import verifiers

        cached = any(Path(verifiers.__file__).parent.glob("__pycache__/*.pyc"))
        return "as installed" + ("" if cached else "; none in the venv and PYTHONDONTWRITEBYTECODE=1: every import compiles")
    return "as installed (written on first import)"


def show_start(start: Run, floor: float) -> None:
    print(f"start-up floor (one process importing vf-eval and a vf.SandboxEnv): {floor:.1f} core-s", flush=True)
    print(
        f"start-up (`websandbox eval --family smoke -n 1`): {start.own:.1f} core-s of its own "
        f"(host {start.host:.1f}: "
        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(start.host_by_name.items()) if v >= 0.05 and k != "bench")
        + f"; containers {sum(start.containers.values()):.2f} in {sum(start.counts.values())}); "
        f"engine daemons (shared) {start.engine_shared:.1f}; machine-wide {start.machine:.1f}; wall {start.wall:.1f} s; "
        f"load {start.load[0]:.1f} to {start.load[1]:.1f}",
        flush=True,
    )
    if start.first_rollout is not None:
        print(
            f"first rollout under way {start.first_rollout:.1f} s after the command, "
            f"after {start.first_rollout_cpu:.1f} core-s of host CPU",
            flush=True,
        )


def show_family(family: str, row: dict) -> None:
    pr, floor, run = row["per_rollout"], row["floor"], row["run"]
    canaries = floor.get("canaries", 0.0)
    with_canaries = (
        f", {pr['own'] / (floor['floor'] + canaries):.2f} against the floor plus the grade's canaries ({canaries:.2f})"
        if canaries
        else ""
    )
    print(
        f"per {family} rollout: {pr['own']:.2f} core-s, floor {floor['floor']:.2f}, ratio {pr['own'] / floor['floor']:.2f}"
        + with_canaries
        + f"; within the run (its containers, its host CPU while rollouts ran): {pr['within']:.2f}, "
        f"ratio {pr['within'] / floor['floor']:.2f}"
        + f" ({run['rollouts']} rollouts, mean reward {sum(run['rewards']) / max(len(run['rewards']), 1):.3f}; "
        f"engine daemons, shared: {pr['engine_shared']:.2f}; machine-wide: {pr['machine']:.2f}; "
        f"containers {run['counts']}; load {run['load'][0]:.1f} to {run['load'][1]:.1f})",
        flush=True,
    )
    used = run["counts"]["rollout"] + run["counts"]["grader"]
    if used < run["rollouts"] * floor["containers"]:
        print(
            f"    warning: {used} used containers metered for {run['rollouts']} rollouts needing "
            f"{floor['containers']} each: the figure above misses some",
            flush=True,
        )
    for name, value in row["breakdown"].items():
        print(f"    {name:<84} {value:6.3f}")


if __name__ == "__main__":
    main()
