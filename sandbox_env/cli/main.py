"""`websandbox`: build the image, clean up, serve a scripted policy, run the main job."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from sandbox_env.cli.task_stages import STAGES
from sandbox_env.constants import DEFAULTS, ENV_ID
from sandbox_env.policy.launch import start_policy_server

POLICY_KEY_VAR = "WEBSANDBOX_POLICY_KEY"


def cmd_build_image(args: argparse.Namespace) -> int:
    from sandbox_env.rollout.image import build_image

    print(build_image(base=args.base, force=args.force))
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    from sandbox_env.sandbox.registry import backend_tools

    tools = backend_tools()
    print(f"engine: {tools.where()}")
    print(tools.gc(all_owners=args.all, other_hosts=args.other_hosts).summary())
    return 0


def cmd_policy_serve(args: argparse.Namespace) -> int:
    server, url = start_policy_server(args.policy, args.script, args.host, args.port, args.fail_after, tokens=args.tokens)
    print(f"serving the {args.script or args.policy} policy at {url} (Ctrl-C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.should_exit = True
    return 0


def vf_eval_command(
    url: str,
    model: str,
    concurrency: int,
    num_examples: int,
    rollouts: int,
    env_args: dict | None,
    resume: str | bool | None = None,
    extra: list[str] | None = None,
) -> list[str]:
    """The vf-eval command line: ours first, then `--resume`, then the caller's arguments (the last of a repeated option wins).

    The environment runs in vf-eval's own process (`--disable-env-server`): an env server
    would start a router and a worker, each importing verifiers' whole v0 stack again
    (seconds of CPU apiece, before the first rollout) for a local policy that needs no
    separate worker. `vf-eval websandbox ...` run by hand keeps its workers.
    """
    resume_args = [] if not resume else ["--resume"] if resume is True else ["--resume", str(resume)]
    return [
        str(Path(sys.executable).with_name("vf-eval")),
        ENV_ID,
        "-m",
        model,
        "-b",
        url,
        "-k",
        POLICY_KEY_VAR,
        "-n",
        str(num_examples),
        "-r",
        str(rollouts),
        "-c",
        str(concurrency),
        "-s",
        "--disable-tui",
        "-C",
        "grade",
        "--disable-env-server",
        "-a",
        json.dumps(env_args or {}),
        *resume_args,
        *(extra or []),
    ]


def run_eval(
    policy: str = "reference",
    script: Path | None = None,
    concurrency: int = DEFAULTS.eval_concurrency,
    num_examples: int = -1,
    rollouts: int = 1,
    env_args: dict | None = None,
    extra: list[str] | None = None,
    resume: str | bool | None = None,
    fail_after: int | None = None,
    run_id: str | None = None,
) -> tuple[int, Path | None]:
    """Serve the policy on loopback and run the real vf-eval against it in the current directory,
    printing live counts as rollouts finish; returns (exit code, run dir).

    vf-eval runs under supervision (cli/supervise.py): signals to this process reach its whole
    process group, and it never outlives this process. Its env-server workers inherit
    `WEBSANDBOX_RUN_ID`, so every container of the run carries `run_id`; the run dir is the
    one vf-eval names on its output (cli/eval_runs.py).
    """
    from sandbox_env.cli.eval_live import LiveCounts
    from sandbox_env.cli.eval_runs import locate, own_location
    from sandbox_env.cli.supervise import Supervised
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.runs import RUN_ID_VAR, current_run_id, hold_run

    ensure_image()
    run_id = run_id or current_run_id()
    hold_run(run_id)  # gc leaves the run's containers alone while this process lives
    model = "script" if script else policy
    args = (model, concurrency, num_examples, rollouts, env_args, resume, extra)
    if extra:  # vf-eval's parser judges `extra` (it imports verifiers' whole stack: seconds of CPU)
        where = locate(vf_eval_command("http://127.0.0.1:0/v1", *args)[1:], Path.cwd())
    else:  # our own command line: vf-eval's rule, without importing vf-eval here
        where = own_location(model, Path.cwd(), resume)
    server, url = start_policy_server(policy, script, "127.0.0.1", 0, fail_after)
    cmd = vf_eval_command(url, *args)
    where.snapshot(time.time())
    env = {**os.environ, POLICY_KEY_VAR: os.environ.get(POLICY_KEY_VAR, "local-policy"), RUN_ID_VAR: run_id}
    print(f"$ {RUN_ID_VAR}={run_id} " + " ".join(cmd), flush=True)
    counts = LiveCounts(where).start()
    try:
        code = Supervised(cmd, env=env, on_line=where.see).run()
    finally:
        server.should_exit = True
        run = counts.stop()
    return code, run


def _shown(path: Path) -> Path:
    """A path as the user can type it from here."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def env_args_of(text: str | None, family: str | None = None) -> dict:
    """The `-a/--env-args` JSON object (and `--family`), or a ValueError that says what to write."""
    try:
        env_args = json.loads(text) if text else {}
    except ValueError as exc:
        raise ValueError(f'-a/--env-args is not JSON ({exc}); write a JSON object, e.g. -a \'{{"family": "orm"}}\'') from None
    if not isinstance(env_args, dict):
        raise ValueError(f"-a/--env-args must be a JSON object of load_environment arguments, not {type(env_args).__name__}")
    if family:
        env_args["family"] = family
    return env_args


def check_script(script: Path | None) -> None:
    """Refuse a policy script that names tasks the installed dataset does not have (they would never run)."""
    if script is None:
        return
    from sandbox_env.dataset import load_rows

    try:
        data = json.loads(script.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read policy script {script}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"policy script {script} must be a JSON object mapping task ids to their calls")
    unknown = sorted(set(data) - {r["info"]["task_id"] for r in load_rows()})
    if unknown:
        raise ValueError(f"policy script {script} names tasks that do not exist: {', '.join(unknown[:10])}")


def cmd_eval(args: argparse.Namespace) -> int:
    """The main job; its input, the engine and the image are checked before anything starts (cli/eval_checks.py)."""
    from sandbox_env.cli.eval_checks import check_eval_input
    from sandbox_env.doors.stack import installed_stack

    env_args = env_args_of(args.env_args, args.family)
    check_script(args.script)
    if installed_stack() == "v1":
        return cmd_eval_v1(args, env_args)
    check_eval_input(env_args)
    from sandbox_env.cli.eval_report import report
    from sandbox_env.sandbox.registry import backend_tools
    from sandbox_env.sandbox.runs import current_run_id

    run_id = current_run_id()
    t0 = time.perf_counter()
    try:
        code, run = run_eval(
            args.policy,
            args.script,
            args.concurrency,
            args.num_examples,
            args.rollouts,
            env_args,
            extra=args.vf_args,
            resume=args.resume,
            fail_after=args.fail_after,
            run_id=run_id,
        )
    finally:
        left = len(backend_tools().settle_run(run_id))  # this run's containers only: other runs may be going on
    wall = time.perf_counter() - t0
    if run is None:
        print(f"vf-eval saved no run (exit code {code}); containers of run {run_id} left afterwards: {left}", file=sys.stderr)
        return code or 1
    status = report(run, f"{args.script or args.policy} policy, {run.name}")
    if code != 0:
        print(f"vf-eval failed (exit code {code}); containers of run {run_id} left afterwards: {left}", file=sys.stderr)
        return code
    print(f"saved to {_shown(run)}; read it in the browser: websandbox view {_shown(run)}")
    print(f"wall time {wall:.1f} s at -c {args.concurrency}; containers left afterwards: {left}")
    return status or (0 if left == 0 else 1)


def refuse_classic_only(args: argparse.Namespace) -> None:
    """On verifiers 0.4, say which of `websandbox eval`'s options only the classic stack has, instead of ignoring them."""
    given = [name for name, value in (("--fail-after", args.fail_after),) if value is not None]
    if args.vf_args:
        given.append("arguments after `--`")
    if given:
        raise ValueError(
            f"{' and '.join(given)}: only the classic stack's `websandbox eval` (verifiers 0.3.x) takes these; with "
            "verifiers 0.4 run v1's `vf-eval websandbox` yourself for its own options"
        )


def cmd_eval_v1(args: argparse.Namespace, env_args: dict) -> int:
    """The main job on verifiers 0.4.x: the v1 vf-eval against the scripted policy (sandbox_env/cli/eval_v1.py),
    after the same checks as on classic (cli/eval_checks.py)."""
    from sandbox_env.cli.eval_checks import check_eval_input
    from sandbox_env.cli.eval_report import report
    from sandbox_env.cli.eval_v1 import resume_eval_v1, run_eval_v1
    from sandbox_env.sandbox.registry import backend_tools
    from sandbox_env.sandbox.runs import RUN_ID_VAR, current_run_id, hold_run

    refuse_classic_only(args)
    if args.resume is None:
        check_eval_input(env_args)
    run_id = os.environ[RUN_ID_VAR] = current_run_id()  # vf-eval and its workers inherit it
    hold_run(run_id)
    t0 = time.perf_counter()
    try:
        if args.resume is not None:  # v1's own --resume, under the run's saved config
            code, run = resume_eval_v1(None if args.resume is True else Path(args.resume), args.policy, args.script)
        else:
            code, run = run_eval_v1(args.policy, args.script, args.concurrency, args.num_examples, args.rollouts, env_args)
    finally:
        left = len(backend_tools().settle_run(run_id))
    wall = time.perf_counter() - t0
    if code != 0 or run is None:
        print(f"vf-eval failed (exit code {code}); containers of run {run_id} left afterwards: {left}", file=sys.stderr)
        return code or 1
    status = report(run, f"{args.script or args.policy} policy, {run.name} (verifiers v1)")
    print(f"saved to {_shown(run)}; read it in the browser: websandbox view {_shown(run)}")
    print(f"wall time {wall:.1f} s at -c {args.concurrency}; containers left afterwards: {left}")
    return status or (0 if left == 0 else 1)


def cmd_tasks(args: argparse.Namespace) -> int:
    """Every task with its family, source, split, difficulty and category (cli/tasks.py); the count goes to stderr."""
    from sandbox_env.cli.tasks import list_tasks

    lines = list_tasks(args.family, args.split)
    try:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `websandbox tasks | head`: the reader has had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    print(f"{len(lines) - 1} tasks", file=sys.stderr)
    return 0


def one_line(exc: BaseException) -> str:
    """An error's text on one line (an engine's message may carry newlines)."""
    return " ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__


def cmd_serve(args: argparse.Namespace) -> int:
    """One v1 env server (verifiers 0.4.x), as prime-rl's `env-server` runs it (sandbox_env/doors/v1/serve.py)."""
    from sandbox_env.doors.stack import installed_stack

    if installed_stack() != "v1":
        raise RuntimeError("`websandbox serve` runs a verifiers v1 env server: install websandbox with verifiers 0.4.x")
    from sandbox_env.doors.v1.serve import serve

    task_args = env_args_of(args.env_args)
    serve(args.address, name=args.name, workers=args.workers, max_concurrent=args.max_concurrent, task_args=task_args)
    return 0


def cmd_check_server(args: argparse.Namespace) -> int:
    """Will this model server work with websandbox (sandbox_env/cli/preflight.py)? Exit 0 when every check passes."""
    from sandbox_env.cli.preflight import api_key_from, check_server

    print(f"checking {args.base_url} with model {args.model} ...", flush=True)
    findings = check_server(args.base_url, args.model, api_key_from(args.api_key_var), timeout=args.timeout)
    for finding in findings:
        print(finding.line())
    failed = sum(not f.ok for f in findings)
    print("the server will work with websandbox" if not failed else f"{failed} problem(s): see the fixes above")
    return 0 if not failed else 1


def cmd_view(args: argparse.Namespace) -> int:
    """`websandbox view`: a run's report written (and opened), a loopback server that follows runs,
    the list of runs, or a run's rollout table for scripts."""
    if args.list:
        if args.export or args.compare or args.out or args.mode:
            raise ValueError("--list only prints the runs (give a folder to search, or none): drop the other options")
        return _view_list(args)
    if args.export:
        if args.compare or args.mode:
            raise ValueError("--export writes one run's table (to --out FILE, else stdout): drop --compare and --serve/--open")
        return _view_export(args)
    if args.mode == "serve":
        return _view_serve(args)
    return _view_write(args)


def _view_run_dir(args: argparse.Namespace) -> Path:
    from sandbox_env.viewer.runs import newest_run, search_roots

    return args.run_dir or newest_run(search_roots(Path.cwd()))


def _view_list(args: argparse.Namespace) -> int:
    from sandbox_env.viewer.index import list_text, summarize
    from sandbox_env.viewer.runs import find_runs, no_runs_error, run_file, search_roots

    roots = [args.run_dir] if args.run_dir else search_roots(Path.cwd())
    runs = [args.run_dir.resolve()] if args.run_dir and run_file(args.run_dir) else find_runs(roots)
    if not runs:
        raise no_runs_error(roots)
    print(list_text([summarize(run) for run in runs], Path.cwd().resolve()))
    return 0


def _view_export(args: argparse.Namespace) -> int:
    from sandbox_env.viewer import load_run
    from sandbox_env.viewer.export import EXPORTS

    run_dir = _view_run_dir(args)
    run = load_run(run_dir)
    text = EXPORTS[args.export](run.rollouts)
    for problem in run.problems[:5]:
        print(f"  {problem}", file=sys.stderr)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(run.rollouts)} rollouts of {run_dir}, {args.export})", file=sys.stderr)
    return 0


def _view_serve(args: argparse.Namespace) -> int:
    from sandbox_env.viewer import load_run
    from sandbox_env.viewer.runs import search_roots
    from sandbox_env.viewer.serve import Site, serve

    if args.run_dir is None and args.compare:
        raise ValueError("--compare needs the run to compare: websandbox view RUN --compare BASELINE --serve")
    if args.run_dir is not None:
        run = load_run(args.run_dir)  # a folder that is no run fails here, before the server starts
        print(f"{len(run.rollouts)} rollouts of {args.run_dir} so far")
    if args.out is not None:
        _view_write(args, show_it=False)
    base = load_run(args.compare) if args.compare else None
    return serve(Site(search_roots(Path.cwd()), args.run_dir, base), args.port)


def _view_write(args: argparse.Namespace, show_it: bool = True) -> int:
    from sandbox_env.viewer import load_run, write_report
    from sandbox_env.viewer.serve import show

    run_dir = _view_run_dir(args)
    run = load_run(run_dir)
    base = load_run(args.compare) if args.compare else None
    default = f"compare-{Path(args.compare).resolve().name}.html" if base else "report.html"
    out = write_report(run, args.out or run_dir / default, base)
    print(f"wrote {out} ({len(run.rollouts)} rollouts of {run_dir}, {out.stat().st_size / 1e6:.1f} MB)")
    for problem in run.problems[:5]:
        print(f"  {problem}")
    if base is not None:
        from sandbox_env.viewer.compare import compare_runs

        c = compare_runs(run, base)["summary"]
        print(
            f"compared with {args.compare}: {c['shared']} tasks in both, {c['gained']} solved here only, "
            f"{c['lost']} solved there only, {c['better']} better, {c['worse']} worse"
            + (f", {c['only_here']} here only" if c["only_here"] else "")
            + (f", {c['only_base']} there only" if c["only_base"] else "")
        )
        for problem in base.problems[:5]:
            print(f"  {args.compare}: {problem}")
    return show(out, args.mode, run_dir) if show_it else 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from sandbox_env.cli.calibrate import cmd_calibrate

    return cmd_calibrate(args)


def _cmd_report(args: argparse.Namespace) -> int:
    from sandbox_env.cli.report import cmd_report

    return cmd_report(args)


def cmd_stage_push(args: argparse.Namespace) -> int:
    """Stage a self-contained environment folder for `prime env push` (sandbox_env/cli/hub.py)."""
    from sandbox_env.cli.hub import content_hash, stage

    files = stage(args.dir)
    print(f"staged {len(files)} files in {args.dir} (content hash {content_hash(args.dir)[:12]})")
    print(f"push it with: cd {args.dir} && prime env push   (a new folder for every push; never edit it by hand)")
    return 0


def package_version() -> str:
    """The installed distribution's version (the environment package, or the checkout's)."""
    from importlib.metadata import PackageNotFoundError, version

    for dist in ("websandbox", "websandbox-dev"):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return "unknown"


def split_passthrough(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """Our arguments, and those after the first `--` (for vf-eval), or None when there is no `--`."""
    if "--" not in argv:
        return argv, None
    i = argv.index("--")
    return argv[:i], argv[i + 1 :]


def cmd_generate(args: argparse.Namespace) -> int:
    """Draw, verify and write a private set of generated orm tasks from a seed (stages/generate_orm.py)."""
    from sandbox_env.generate.store import DEFAULT_SEED, GENERATED_FILE
    from sandbox_env.stages.generate_orm import main_generate

    if args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.target < 1:
        raise ValueError(f"--target must be at least 1, got {args.target}")
    out = args.out or (GENERATED_FILE if args.seed == DEFAULT_SEED else Path(f"generated_orm_seed{args.seed}.jsonl"))
    seeded = args.fixtures == "seeded"
    return main_generate(args.seed, args.target, out, args.concurrency, shape=args.shape, merge=args.merge, seeded=seeded)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="websandbox", description=__doc__)
    ap.add_argument("--version", action="version", version=f"websandbox {package_version()}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build-image", help="build the runtime image (a no-op when it is up to date)")
    p.add_argument("--base", default="auto", help="auto | pull | debootstrap | an image name (default auto)")
    p.add_argument("--force", action="store_true", help="rebuild even when the image exists")
    p.set_defaults(func=cmd_build_image)

    p = sub.add_parser(
        "gc",
        help="remove containers whose owner is gone (never a live run's), on the engine DOCKER_HOST names",
        description="Removes websandbox containers whose owner process, on this machine, is provably gone. "
        "Containers owned on another machine (one engine shared by env servers on several hosts) are left and "
        "counted: nothing here can tell whether their owner lives.",
    )
    p.add_argument("--all", action="store_true", help="remove every websandbox container on the engine, even of live runs")
    p.add_argument(
        "--other-hosts",
        action="store_true",
        help="also remove containers whose owner ran on another machine (or before a reboot): when those are known to be done",
    )
    p.set_defaults(func=cmd_gc)

    p = sub.add_parser("policy", help="scripted policies over the chat-completions protocol")
    psub = p.add_subparsers(dest="policy_command", required=True)
    s = psub.add_parser("serve", help="serve a scripted policy on loopback")
    s.add_argument("--policy", default="reference", choices=["reference", "null"])
    s.add_argument("--script", type=Path, help="a JSON file mapping task ids to tool calls and a final message")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8765)
    s.add_argument("--tokens", action="store_true", help="return token ids and logprobs as vLLM does")
    s.add_argument("--fail-after", type=int, metavar="N", help="answer HTTP 500 after the first N requests of a rollout")
    s.set_defaults(func=cmd_policy_serve)

    p = sub.add_parser(
        "eval",
        help="the main job: vf-eval over every task against a scripted policy",
        usage="websandbox eval [options] [-- VF_EVAL_ARGS ...]",
        epilog="Everything after `--` goes to vf-eval as it is (the last of a repeated option wins).",
    )
    p.add_argument("--policy", default="reference", choices=["reference", "null"])
    p.add_argument("--script", type=Path)
    p.add_argument("--family", help="only this family (`websandbox tasks` lists them)")
    p.add_argument("-c", "--concurrency", type=int, default=DEFAULTS.eval_concurrency)
    p.add_argument("-n", "--num-examples", type=int, default=-1)
    p.add_argument("-r", "--rollouts", type=int, default=1)
    p.add_argument("-a", "--env-args", help="JSON object of load_environment arguments")
    p.add_argument(
        "--resume",
        nargs="?",
        const=True,
        metavar="PATH",
        help="vf-eval --resume: go on with PATH, or with the newest incomplete run of this policy",
    )
    p.add_argument("--fail-after", type=int, metavar="N", help="the policy server answers HTTP 500 after N requests of a rollout")
    p.set_defaults(func=cmd_eval)

    from sandbox_env.dataset import SPLITS

    p = sub.add_parser(
        "tasks",
        help="list every task; `websandbox tasks STAGE ...` runs a stage of the task pipeline: " + ", ".join(STAGES),
        description="One task a line, header first: the values `websandbox eval --family` and -a's family, "
        "category, difficulty, task_ids and split accept. Smoke tasks are listed too (they run only when named). "
        "`websandbox tasks STAGE ...` runs a stage of the task pipeline instead (each takes its module's options): "
        "build (compile and verify; = python build_tasks.py), freeze, generate, reverify, rerender, repair, compose.",
    )
    p.add_argument("--family", help="only this family")
    p.add_argument("--split", default="all", help=f"only this split: {', '.join(SPLITS)} (default all)")
    p.set_defaults(func=cmd_tasks)

    p = sub.add_parser(
        "serve",
        help="run one v1 env server (verifiers 0.4.x) for prime-rl's orchestrator: one per Docker host",
        description="Serves websandbox episodes over verifiers v1's env-server protocol (ZMQ) on ADDRESS, with "
        "sandboxes on the engine DOCKER_HOST names; prints `serving on ADDRESS` once bound.",
    )
    p.add_argument("--address", default="tcp://127.0.0.1:5000", help="ZMQ address to bind (tcp://0.0.0.0:PORT for other hosts)")
    p.add_argument("--name", help="this server's name in its containers' labels (default: the host name)")
    p.add_argument("--workers", type=int, default=1, help="env worker processes behind the address (default 1)")
    p.add_argument("--max-concurrent", type=int, help="episodes in flight per worker (default: as many as are sent)")
    p.add_argument(
        "-a",
        "--env-args",
        help="JSON object of task knobs by their load_environment names (image, pool_size, cpus, ...); "
        "which tasks run is the orchestrator's choice",
    )
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "check-server",
        help="check that a model server answers as verifiers needs (tools, tool calls, the conversation sent back)",
        description="Sends what each verifiers stack sends during a rollout to an OpenAI-compatible server and says "
        "in plain words whether it will work and what to set if not. Exit status 1 when a check fails.",
    )
    p.add_argument("-b", "--base-url", required=True, help="the server's OpenAI-compatible base URL (ends in /v1)")
    p.add_argument("-m", "--model", required=True, help="the model name to send")
    p.add_argument("-k", "--api-key-var", help="the environment variable that holds the key (as vf-eval's -k)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for each answer (default 120)")
    p.set_defaults(func=cmd_check_server)

    from sandbox_env.generate import SHAPE_NAMES

    p = sub.add_parser(
        "generate",
        help="draw and verify generated orm tasks from a seed; says how long verification took",
        description="Draws query trees from SEED, pre-screens them in Python, verifies every candidate's reference and "
        "mutants in the runtime image over every fixture variant, and writes the kept tasks as JSON lines. The default "
        "seed's output is the shipped sandbox_env/data/generated_orm.jsonl; any other seed gives a private set whose "
        "expected rows were never published.",
    )
    p.add_argument("--seed", type=int, required=True, help="the seed the task set is drawn from")
    p.add_argument("--target", type=int, default=1400, help="candidates that pass the pre-screen (default 1400)")
    p.add_argument("--out", type=Path, help="file to write (default: generated_orm_seedN.jsonl here)")
    p.add_argument("--concurrency", type=int, default=2, help="containers at once (default 2)")
    p.add_argument("--shape", choices=SHAPE_NAMES, help="draw only this task shape (a stream of its own)")
    p.add_argument("--merge", action="store_true", help="add the new tasks to --out's instead of replacing them")
    p.add_argument("--fixtures", choices=("hand", "seeded"), default="hand",
                   help="verify over the hand-written fixture's variants (default) or over the seeded worlds' fixture "
                   "seeds (runtime/container/orm_fixture/world.py; eval holds out generate/store.py's EVAL_SEEDS)")  # fmt: skip
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser(
        "stage-push",
        help="copy the environment folder, sandbox_env and images into DIR, a folder `prime env push` can push",
        description="Copies what a push of the environment needs (the environment folder's files, sandbox_env/ and "
        "images/) into the new or empty folder DIR by the rule `prime env push` collects files by, so its source "
        "archive builds the same wheel as this checkout and its content hash covers every file of the package. "
        "Works from a checkout only.",
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="a new or empty folder outside environments/websandbox")
    p.set_defaults(func=cmd_stage_push)

    p = sub.add_parser(
        "calibrate",
        help="each task's measured pass rate (avg@k) from saved runs of one model, as the file pass_rates reads",
        description="Reads saved runs of one model (vf-eval websandbox -m MODEL -r K, either stack) and writes each "
        'task\'s avg@k to FILE; give it as `pass_rates` (-a \'{"pass_rates": "FILE"}\') to set difficulty from the '
        "measured rate and to filter with min_pass_rate / max_pass_rate.",
    )
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders of one model")
    p.add_argument("--out", type=Path, required=True, metavar="FILE", help="where to write the pass rates (JSON)")
    p.set_defaults(func=_cmd_calibrate)

    p = sub.add_parser(
        "report",
        help="a saved run's score with its 95 % interval, per family, difficulty and category; --compare BASE",
        description="Prints a run's score (the mean over tasks) with a 95 % bootstrap interval (over tasks, and over "
        "rollouts when a task has several), overall and per family, difficulty and category, with pass@k and avg@k "
        "when every task has k > 1 rollouts; with --compare, the paired difference to another run and whether it "
        "is larger than their noise.",
    )
    p.add_argument("run_dir", nargs="?", type=Path, help="a run folder (either stack); default: the newest run")
    p.add_argument("--compare", type=Path, metavar="BASE", help="a run of the same tasks to compare against")
    p.add_argument("--json", action="store_true", help="the same figures as JSON, for scripts")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser(
        "view",
        help="a saved run as one HTML page (grades, transcripts); --serve follows runs as results arrive",
        description="Writes a run's report (one self-contained HTML file) and opens it; or, with --serve, starts a "
        "loopback server whose pages follow the run as results arrive and list every run under the outputs folders "
        "(no RUN_DIR: the list); --list prints that list; --export writes a run's rollout table as CSV or JSONL.",
    )
    p.add_argument(
        "run_dir",
        nargs="?",
        type=Path,
        help="a run folder (results.jsonl of verifiers 0.3.x, or traces.jsonl of 0.4.x); default: the newest run "
        "(with --serve: the list of runs; with --list: a folder to search instead of the outputs folders)",
    )
    p.add_argument(
        "--compare",
        type=Path,
        metavar="BASELINE",
        help="another run of the same tasks: per-task score change (this run minus BASELINE) and the tasks that flipped",
    )
    p.add_argument(
        "--out",
        type=Path,
        help="the file to write (default: RUN_DIR/report.html, or compare-BASELINE.html; with --export: stdout)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--serve",
        dest="mode",
        action="store_const",
        const="serve",
        help="serve on 127.0.0.1 pages that update as results arrive, and the list of runs (/runs)",
    )
    mode.add_argument("--open", dest="mode", action="store_const", const="open", help="open it in the browser")
    mode.add_argument("--no-open", dest="mode", action="store_const", const="none", help="only write the file")
    p.add_argument("--port", type=int, default=0, help="port for --serve (default: any free port)")
    p.add_argument(
        "--list",
        action="store_true",
        help="print every run under the outputs folders: when written, model, rollouts, mean reward, errored",
    )
    p.add_argument(
        "--export",
        choices=("csv", "jsonl"),
        help="write the run's rollout table (one row a rollout, no transcripts) as CSV or JSONL, to --out FILE or stdout",
    )
    p.set_defaults(func=cmd_view, mode=None)

    argv, passthrough = split_passthrough(sys.argv[1:] if argv is None else list(argv))
    if argv[:1] == ["tasks"] and len(argv) > 1 and argv[1] in STAGES:  # a stage of the task pipeline (cli/task_stages.py)
        stage = STAGES[argv[1]]
        if stage is not None:
            return stage(argv[2:])
        argv = ["generate", *argv[2:]]
    args = ap.parse_args(argv)
    if passthrough is not None and args.command != "eval":
        ap.error(f"only `websandbox eval` passes arguments after `--` on (to vf-eval), not `websandbox {args.command}`")
    args.vf_args = passthrough or []
    try:
        return args.func(args)
    except Exception as exc:  # noqa: BLE001 - one clear line instead of a traceback
        from sandbox_env.sandbox.registry import backend_tools

        if isinstance(exc, (*backend_tools().unavailable, ValueError, RuntimeError, FileNotFoundError)):
            print(f"websandbox: {one_line(exc)}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
