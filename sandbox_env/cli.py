"""`websandbox`: build the image, clean up, serve a scripted policy, run the main job."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from sandbox_env.constants import DEFAULTS, ENV_ID, POLICY_SERVER_START_TIMEOUT, REPO_ROOT

POLICY_KEY_VAR = "WEBSANDBOX_POLICY_KEY"


def cmd_build_image(args: argparse.Namespace) -> int:
    from sandbox_env.image import build_image

    print(build_image(base=args.base, force=args.force))
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    from sandbox_env.sandbox.docker import gc

    removed = gc(all_owners=args.all)
    print(f"removed {len(removed)} container(s)" + (f": {' '.join(removed)}" if removed else ""))
    return 0


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def start_policy_server(policy: str, script: Path | None, host: str, port: int):
    """Serve the policy in a background thread; returns (server, base_url)."""
    import uvicorn

    from sandbox_env.policy.policies import make_policy
    from sandbox_env.policy.server import create_app

    app = create_app(make_policy(policy, script))
    port = port or _free_port(host)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True, name="policy-server")
    thread.start()
    deadline = time.monotonic() + POLICY_SERVER_START_TIMEOUT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the policy server did not start on {host}:{port}")
        time.sleep(0.05)
    return server, f"http://{host}:{port}/v1"


def cmd_policy_serve(args: argparse.Namespace) -> int:
    server, url = start_policy_server(args.policy, args.script, args.host, args.port)
    print(f"serving the {args.script or args.policy} policy at {url} (Ctrl-C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.should_exit = True
    return 0


def _results_dir(model: str) -> Path:
    return REPO_ROOT / "environments" / ENV_ID / "outputs" / "evals" / f"{ENV_ID}--{model}"


def _newest_run(model: str, before: set[Path]) -> Path | None:
    base = _results_dir(model)
    runs = [p for p in base.glob("*") if p.is_dir() and p not in before and (p / "results.jsonl").exists()]
    return max(runs, key=lambda p: p.stat().st_mtime) if runs else None


def family_table(results_file: Path) -> list[dict]:
    """Per-family rows from a saved results.jsonl: tasks, mean reward, errors."""
    rows: dict[str, dict] = {}
    for line in results_file.read_text().splitlines():
        rec = json.loads(line)
        info = rec.get("info") or {}
        if isinstance(info, str):
            info = json.loads(info)
        fam = info.get("family") or rec.get("task") or "?"
        r = rows.setdefault(fam, {"family": fam, "rollouts": 0, "reward": 0.0, "perfect": 0,
                                  "scoring_error": 0, "tampered": 0})  # fmt: skip
        reward = float(rec.get("reward") or 0.0)
        metrics = rec.get("metrics") or {}
        r["rollouts"] += 1
        r["reward"] += reward
        r["perfect"] += reward == 1.0
        r["scoring_error"] += bool(metrics.get("scoring_error", rec.get("scoring_error", 0)))
        r["tampered"] += bool(metrics.get("tampered", rec.get("tampered", 0)))
    for r in rows.values():
        r["reward"] = r["reward"] / max(r["rollouts"], 1)
    return sorted(rows.values(), key=lambda r: r["family"])


def print_table(rows: list[dict], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("family", "rollouts", "mean reward", "reward 1.0", "scoring errors", "tampered"):
        table.add_column(col, justify="left" if col == "family" else "right")
    for r in rows:
        table.add_row(r["family"], str(r["rollouts"]), f"{r['reward']:.3f}", str(r["perfect"]),
                      str(r["scoring_error"]), str(r["tampered"]))  # fmt: skip
    Console().print(table)


def leaked_ids() -> set[str]:
    """Containers whose owning process has ended (a finished vf-eval leaves none)."""
    from sandbox_env.sandbox.docker import leaked_containers

    return {c["Id"] for c in leaked_containers()}


def run_eval(policy: str = "reference", script: Path | None = None, concurrency: int = DEFAULTS.eval_concurrency,
             num_examples: int = -1,
             rollouts: int = 1, env_args: dict | None = None,
             extra: list[str] | None = None) -> tuple[int, Path | None]:  # fmt: skip
    """Serve the policy on loopback and run the real vf-eval against it; returns (exit code, run dir).

    vf-eval runs the environment in its own process (`--disable-env-server`): its env
    server would start a router and a worker, each importing verifiers' whole v0 stack
    again (seconds of CPU apiece) before the first rollout, for a local policy that
    needs no separate worker. `vf-eval websandbox ...` run by hand keeps the workers.
    """
    from sandbox_env.image import ensure_image

    ensure_image()
    server, url = start_policy_server(policy, script, "127.0.0.1", 0)
    model = "script" if script else policy
    before = set(_results_dir(model).glob("*"))
    cmd = [
        str(Path(sys.executable).with_name("vf-eval")), ENV_ID, "-m", model, "-b", url, "-k", POLICY_KEY_VAR,
        "-n", str(num_examples), "-r", str(rollouts), "-c", str(concurrency), "-s", "--disable-tui", "-C", "grade",
        "--disable-env-server", "-a", json.dumps(env_args or {}), *(extra or []),
    ]  # fmt: skip
    env = {**os.environ, POLICY_KEY_VAR: os.environ.get(POLICY_KEY_VAR, "local-policy")}
    print("$ " + " ".join(cmd), flush=True)
    try:
        code = subprocess.run(cmd, cwd=REPO_ROOT, env=env).returncode
    finally:
        server.should_exit = True
    return code, _newest_run(model, before)


def cmd_eval(args: argparse.Namespace) -> int:
    env_args = json.loads(args.env_args) if args.env_args else {}
    if args.family:
        env_args["family"] = args.family
    leaked_before = leaked_ids()
    t0 = time.perf_counter()
    code, run = run_eval(args.policy, args.script, args.concurrency, args.num_examples, args.rollouts, env_args)
    wall = time.perf_counter() - t0
    if code != 0 or run is None:
        print(f"vf-eval failed (exit code {code})", file=sys.stderr)
        return code or 1
    print_table(family_table(run / "results.jsonl"), f"{args.script or args.policy} policy, {run.name}")
    left = len(leaked_ids() - leaked_before)
    print(f"saved to {run.relative_to(REPO_ROOT)}; read it in the browser: websandbox view {run.relative_to(REPO_ROOT)}")
    print(f"wall time {wall:.1f} s at -c {args.concurrency}; containers left afterwards: {left}")
    return 0 if left == 0 else 1


def cmd_view(args: argparse.Namespace) -> int:
    from sandbox_env.viewer import load_run, write_report
    from sandbox_env.viewer.runs import EVALS, newest_run
    from sandbox_env.viewer.serve import show

    run_dir = args.run_dir or newest_run([Path.cwd() / EVALS, REPO_ROOT / EVALS])
    run = load_run(run_dir)
    out = write_report(run, args.out or run_dir / "report.html")
    print(f"wrote {out} ({len(run.rollouts)} rollouts of {run_dir}, {out.stat().st_size / 1e6:.1f} MB)")
    for problem in run.problems[:5]:
        print(f"  {problem}")
    return show(out, args.mode, args.port)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="websandbox", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build-image", help="build the runtime image (a no-op when it is up to date)")
    p.add_argument("--base", default="auto", help="auto | pull | debootstrap | an image name (default auto)")
    p.add_argument("--force", action="store_true", help="rebuild even when the image exists")
    p.set_defaults(func=cmd_build_image)

    p = sub.add_parser("gc", help="remove containers left by runs that crashed")
    p.add_argument("--all", action="store_true", help="remove every websandbox container, even of live runs")
    p.set_defaults(func=cmd_gc)

    p = sub.add_parser("policy", help="scripted policies over the chat-completions protocol")
    psub = p.add_subparsers(dest="policy_command", required=True)
    s = psub.add_parser("serve", help="serve a scripted policy on loopback")
    s.add_argument("--policy", default="reference", choices=["reference", "null"])
    s.add_argument("--script", type=Path, help="a JSON file mapping task ids to tool calls and a final message")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8765)
    s.set_defaults(func=cmd_policy_serve)

    p = sub.add_parser("eval", help="the main job: vf-eval over every task against a scripted policy")
    p.add_argument("--policy", default="reference", choices=["reference", "null"])
    p.add_argument("--script", type=Path)
    p.add_argument("--family", help="only this family")
    p.add_argument("-c", "--concurrency", type=int, default=DEFAULTS.eval_concurrency)
    p.add_argument("-n", "--num-examples", type=int, default=-1)
    p.add_argument("-r", "--rollouts", type=int, default=1)
    p.add_argument("-a", "--env-args", help="JSON object of load_environment arguments")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("view", help="write a saved run as one HTML page (grades, transcripts) and open or serve it")
    p.add_argument("run_dir", nargs="?", type=Path, help="a run folder (holds results.jsonl); default: the newest run")
    p.add_argument("--out", type=Path, help="the HTML file to write (default: RUN_DIR/report.html)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--serve", dest="mode", action="store_const", const="serve", help="serve it on 127.0.0.1")
    mode.add_argument("--open", dest="mode", action="store_const", const="open", help="open it in the browser")
    mode.add_argument("--no-open", dest="mode", action="store_const", const="none", help="only write the file")
    p.add_argument("--port", type=int, default=0, help="port for --serve (default: any free port)")
    p.set_defaults(func=cmd_view, mode=None)

    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except Exception as exc:  # noqa: BLE001 - one clear line instead of a traceback
        from sandbox_env.sandbox.docker import DockerUnavailableError

        if isinstance(exc, (DockerUnavailableError, ValueError, RuntimeError, FileNotFoundError)):
            print(f"websandbox: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
