"""Two runtime images side by side in one process, their tool calls alternated.

    python bench/paired.py IMAGE_A IMAGE_B [--n 200] [--rounds 3]

On a machine that others load, two figures taken minutes apart compare loads, not code.
This bench opens one sandbox of each image with the same host code, then alternates
`bash("true")` and `execute_code("1")` between them call by call, so that both see the
same load. Each round prints the median round trip of each image and their ratio, and
the mean CPU per call of each sandbox and of its file server (CPU does not grow with the
load as wall time does); the load average is printed before and after. The agent and everything else under
`sandbox_env/runtime/` ships in the image, so an image built from another checkout
(`websandbox build-image` there) measures that checkout's in-container side.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox_env.sandbox.docker import DockerBackend  # noqa: E402


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def alternate(sandboxes: list, call, n: int) -> list[tuple[float, float | None, float | None]]:
    """For each sandbox, `call(sandbox)`'s median seconds and mean CPU per call, the calls interleaved one by one.

    CPU is that of the sandbox's cgroup and of the host process serving its root
    filesystem (fuse-overlayfs), as the backend reads them: None where it cannot.
    """
    times: list[list[float]] = [[] for _ in sandboxes]
    before = [sb.backend.usage_point(sb.id) for sb in sandboxes]
    for _ in range(n):
        for i, sb in enumerate(sandboxes):
            t0 = time.perf_counter()
            await call(sb)
            times[i].append(time.perf_counter() - t0)
    out = []
    for sb, t, b in zip(sandboxes, times, before, strict=True):
        a = sb.backend.usage_point(sb.id)
        cpu = served = None
        if a is not None and b is not None:
            cpu = None if a.cpu is None or b.cpu is None else (a.cpu - b.cpu) / n
            served = None if a.served is None or b.served is None else (a.served - b.served) / n
        out.append((statistics.median(t), cpu, served))
    return out


def _ms(x: float | None) -> str:
    return "   n/a" if x is None else f"{x * 1000:6.2f}"


async def run(images: list[str], n: int, rounds: int) -> None:
    backend = DockerBackend()
    try:
        async with contextlib.AsyncExitStack() as stack:
            sandboxes = [await stack.enter_async_context(backend.sandbox(image)) for image in images]
            await measure(sandboxes, n, rounds)
    finally:
        backend.teardown()


async def measure(sandboxes: list, n: int, rounds: int) -> None:
    for sb in sandboxes:
        await sb.start_python()
        for _ in range(5):  # warm: the first calls of a sandbox fill its caches
            await sb.exec("true")
            await sb.run_python("1")
    print(f"load average before: {loadavg()}", flush=True)
    calls = (("bash('true')", lambda sb: sb.exec("true")), ("execute_code('1')", lambda sb: sb.run_python("1")))
    for r in range(rounds):
        for name, call in calls:
            (a, a_cpu, a_srv), (b, b_cpu, b_srv) = await alternate(sandboxes, call, n)
            print(
                f"round {r + 1} {name:<18} A {a * 1000:7.2f} ms  B {b * 1000:7.2f} ms  B/A {b / a:.2f}  "
                f"CPU per call, sandbox A {_ms(a_cpu)} B {_ms(b_cpu)} ms, file server A {_ms(a_srv)} B {_ms(b_srv)} ms",
                flush=True,
            )
    print(f"load average after: {loadavg()}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("image_a")
    ap.add_argument("image_b")
    ap.add_argument("--n", type=int, default=200, help="calls per image per figure (default 200)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"A = {args.image_a}\nB = {args.image_b}", flush=True)
    asyncio.run(run([args.image_a, args.image_b], args.n, args.rounds))


if __name__ == "__main__":
    main()
