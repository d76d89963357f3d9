"""The peer's figures on the same image: verifiers 0.4's DockerRuntime, as runtime v1 environments use it.

    .venv-v1/bin/python bench/peer.py IMAGE [N]   (prints one JSON object)

Run by bench.py with the verifiers 0.4 venv's Python (the runtime is only in 0.4), on
the image websandbox's sandboxes use. DockerRuntime drives the `docker` CLI: `start` is
a `docker run` and a few more CLI calls (inspect, the workdir, the published port, the
callback proxy's listener), and `run(argv)` is one `docker exec` a call. Figures are
medians: `start` (to a container ready for `run`), `run(['true'])` and
`run(['python', '-c', '1'])`, with the same per-call environment as a rollout would
pass (none).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

from verifiers.v1.runtimes.docker import DockerConfig, DockerRuntime


async def _median(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def measure(image: str, n: int) -> dict[str, float]:
    config = DockerConfig(image=image, workdir="/workspace")
    starts = []
    out: dict[str, float] = {}
    for i in range(max(3, n // 4)):
        runtime = DockerRuntime(config)
        try:
            t0 = time.perf_counter()
            await runtime.start()
            starts.append(time.perf_counter() - t0)
            if i == 0:
                for argv in (["true"], ["python", "-c", "1"]):  # both checked once: the figures are of real work
                    result = await runtime.run(argv, {})
                    if result.exit_code != 0:
                        raise RuntimeError(f"the peer's run({argv}) failed: {result.stderr}")
                out["run_true"] = await _median(lambda r=runtime: r.run(["true"], {}), n)
                out["run_python"] = await _median(lambda r=runtime: r.run(["python", "-c", "1"], {}), n)
        finally:
            await runtime.stop()
    out["start"] = statistics.median(starts)
    return out


def main() -> None:
    image = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    print(json.dumps(asyncio.run(measure(image, n))))


if __name__ == "__main__":
    main()
