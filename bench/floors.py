"""Floors of a rollout's CPU cost: the least work a family's rollout needs, done outside the harness.

A family's floor is one fresh container for each container its rollout needs (the
rollout's; for fastapi and django also one for grading; orm grades on the host), each
running only that container's share of the reference's work, started and removed
through the Docker SDK with the sandbox's own flags and no agent, no session, no pool:

- orm: the session's first cell (a private copy of the fixture, Django set up, the usual
  names imported) and the reference's cell, in one `python -c`;
- fastapi: the reference's own bash call (app.py by heredoc, `python -c 'import app'`);
  then grading: app.py laid out, `fastapi.testclient` imported, every check's requests
  sent once through `TestClient` (a freshly executed app.py per check, as checks expect);
- django: the task's files and the reference's bash calls (deliverables by heredoc, the
  visible tests run by pytest); then grading: tree, deliverables and the acceptance suite
  (the visible and the hidden tests: what the task is graded by) laid out and pytest run
  over it with pytest-django, as the runner runs it.

Beside the floors, two figures that split a grading container's cost by who decided it:
- `grader_alone` (fastapi, django): the real grader program (runtime/grader/http_driver.py,
  runtime/grader/pytest_runner.py) with the very request a grade sends (canaries included),
  started by bash in a fresh container with no agent: the floor's grading share plus
  what the grader's design adds (the app served by uvicorn in a process of its own and
  driven over a socket; the integrity guard; the canaries). A grading container of the
  harness costs this plus the harness's own work (agent, spawn and feed, file writes).
- `canaries` (django): pytest over the suite a grade sends (every module twice, with
  look-alike canaries; families/django.py) minus pytest over the acceptance suite alone.
Both are how a grade resists a deliverable that targets the grader: work the floor
leaves out and the breakdown names.

Also the parts a breakdown is read against: one lifecycle (`true`) and the imports
alone. Each floor is measured by the same `cpuacct.Meter` as the runs: the container's
cgroup, its containerd-shim (with runc) and its fuse-overlayfs daemon, plus the CPU this
process spends on the SDK calls.
"""

from __future__ import annotations

import json
import shlex
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cpuacct import Meter

from sandbox_env.constants import CONTAINER_PYTHON, DEFAULTS, SANDBOX_USER, WORKSPACE
from sandbox_env.families.base import TaskRow
from sandbox_env.families.django import INI
from sandbox_env.families.orm import SESSION_ENV, session_preamble
from sandbox_env.sandbox.docker import docker_client
from sandbox_env.sandbox.docker.host_tree import HostTrees
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_PID, LABEL_ROLE
from sandbox_env.sandbox.docker.spec import container_spec
from sandbox_env.sandbox.types import Limits
from sandbox_env.verify import reference_calls
from sandbox_env.verify.base import HEREDOC

IMPORTS = {
    "orm": "import django",
    "fastapi": "import fastapi.testclient",
    "django": "import django.test, pytest, pytest_django.plugin",
}

# Sends each check's requests through TestClient, as the HTTP driver does, minus its witness and canaries.
FASTAPI_WORK = """
import json, sys, types
sys.path.insert(0, "/workspace")
from fastapi.testclient import TestClient
source = open("/workspace/app.py").read()
for check in json.loads(sys.argv[1]):
    module = types.ModuleType("app"); module.__file__ = "/workspace/app.py"; sys.modules["app"] = module
    exec(compile(source, "/workspace/app.py", "exec"), module.__dict__)
    with TestClient(module.app, raise_server_exceptions=False, follow_redirects=False) as client:
        for step in check["steps"]:
            r = step["request"]; kw = {}
            if "query" in r: kw["params"] = [tuple(p) for p in r["query"]]
            if "headers" in r: kw["headers"] = [tuple(p) for p in r["headers"]]
            if "json" in r: kw["json"] = r["json"]
            if "form" in r: kw["data"] = r["form"]
            if "files" in r: kw["files"] = [(f[0], (f[1], f[2].encode(), f[3])) for f in r["files"]]
            if "content" in r: kw["content"] = r["content"].encode()
            client.request(r["method"], r["path"], **kw).content
"""


@dataclass
class Job:
    """One fresh container's share of a floor: an argv run as the sandbox user in /workspace."""

    name: str
    argv: list[str]
    env: dict[str, str] | None = None


ARG_CHUNK = 100_000  # bytes per argument: the kernel refuses any one argument over 128 KiB (MAX_ARG_STRLEN)


def _bash(*parts: str) -> list[str]:
    """One bash script as argv; a script longer than one argument may be (the grader programs and a
    request together are) goes in pieces that bash joins again ("$*" with IFS empty) and runs."""
    script = "\n".join(p for p in parts if p)
    if len(script.encode()) <= ARG_CHUNK:
        return ["/bin/bash", "-c", script]
    chunks = [script[i : i + ARG_CHUNK // 4] for i in range(0, len(script), ARG_CHUNK // 4)]
    return ["/bin/bash", "-c", 'IFS=; eval "$*"', "bash", *chunks]


def _calls_as_bash(calls: list[dict]) -> str:
    """The reference's tool calls as one script (execute_code cells go to python over a heredoc)."""
    out = []
    for call in calls:
        if call["tool"] == "bash":
            out.append(call["args"]["command"])
        else:
            out.append(f"{CONTAINER_PYTHON} - <<'WEBSANDBOX_CELL'\n{call['args']['code']}\nWEBSANDBOX_CELL")
    return "\n".join(out)


def family_jobs(task: TaskRow) -> list[Job]:
    """The containers a rollout of `task` needs at least, each with its share of the reference's work."""
    calls = reference_calls(task.family, task.task_id)
    if task.family == "orm":
        cell = session_preamble() + "\n" + calls[0]["args"]["code"] + "\nassert isinstance(result, list)\n"
        return [Job("rollout", [CONTAINER_PYTHON, "-c", cell], dict(SESSION_ENV))]
    if task.family == "fastapi":
        rollout = Job("rollout", _bash(write_files(task.files), _calls_as_bash(calls)))
        app = {"app.py": _reference_file(task, "app.py")}
        checks = json.dumps(task.grading["checks"])
        work = f"{CONTAINER_PYTHON} -c {shlex.quote(FASTAPI_WORK)} {shlex.quote(checks)}"
        return [rollout, Job("grading", _bash(write_files(app), work))]
    if task.family == "django":
        rollout = Job("rollout", _bash(write_files(task.files), _calls_as_bash(calls)))
        return [rollout, django_grading(task, acceptance_suite(task))]
    raise ValueError(f"no floor for family {task.family!r}")


def acceptance_suite(task: TaskRow) -> dict[str, str]:
    """The visible and the hidden tests, side by side under tests/ (a hidden module may share a visible one's name)."""
    hidden = {f"tests/test_hidden_{Path(p).name.removeprefix('test_')}": t for p, t in task.grading.get("hidden", {}).items()}
    return {**task.grading["tests"], **hidden}


def django_grading(task: TaskRow, tests: dict[str, str], expect_failures: bool = False) -> Job:
    """A grading container's share for django: tree, the reference's deliverables and `tests`, run by pytest."""
    g = task.grading
    files = {**g["tree"], **_reference_deliverables(task), **tests}
    pytest = [
        CONTAINER_PYTHON,
        "-m",
        "pytest",
        "-p",
        "pytest_django.plugin",
        "-p",
        "no:cacheprovider",
        "-c",
        INI,
        "--rootdir",
        WORKSPACE,
        "--ds",
        g["settings"],
        "--no-migrations",
        "-q",
        *sorted(tests),
    ]
    run = "cd /workspace && PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 " + shlex.join(pytest)
    if expect_failures:  # canaries are made to fail
        run += " > /dev/null; true"
    return Job("grading", _bash(write_files(files), run))


def canary_job(task: TaskRow) -> Job:
    """pytest over the suite a django grade sends: the acceptance suite with fresh look-alike canaries."""
    from sandbox_env.families.django import make_canaries

    return django_grading(task, make_canaries(task.grading).files, expect_failures=True)


class _Captured(Exception):
    pass


class _CapturingGrader:
    """Takes the one grading a family asks for, instead of running it."""

    def __init__(self) -> None:
        self.timeout = DEFAULTS.timeout_seconds
        self.run: tuple[str, dict, dict] | None = None

    async def run_program(self, program: str, request: dict, files: dict, timeout: float | None = None):
        self.run = (program, request, files)
        raise _Captured


def grader_job(task: TaskRow) -> Job:
    """The real grader program with the request a grade of the reference sends, run by bash with no agent."""
    import asyncio

    from sandbox_env.families import get_family
    from sandbox_env.grading.grader import make_nonce
    from sandbox_env.grading.programs import grader_argv, grader_files

    if task.family == "fastapi":
        final = {"files": {"app.py": _reference_file(task, "app.py")}}
    else:
        final = {"files": _reference_deliverables(task)}
    capture = _CapturingGrader()
    try:
        asyncio.run(get_family(task.family).grade(final, task, capture))  # type: ignore[arg-type]
    except _Captured:
        pass
    if capture.run is None:
        raise RuntimeError(f"{task.task_id}: the family asked for no grading")
    program, request, files = capture.run
    texts = {p: (v.decode() if isinstance(v, bytes) else v) for p, v in grader_files().items()}
    texts["/tmp/websandbox-request.json"] = json.dumps({**request, "nonce": make_nonce()})
    run = f"cd /workspace && {shlex.join(grader_argv(CONTAINER_PYTHON, program))} < /tmp/websandbox-request.json > /dev/null"
    return Job("grader", _bash(write_files({**texts, **files}), run))


def write_files(files: dict[str, str | bytes]) -> str:
    """Bash that lays out files as the agent does, without a process per file: one `mkdir -p`, then
    bash builtins (a heredoc read into a variable, printf into the file). A relative path is under
    /workspace. (The reference's own calls keep their `mkdir`/`cat` per file: that is its work.)"""
    if not files:
        return ""
    paths = {}
    for path, text in files.items():
        text = text.decode() if isinstance(text, bytes) else text
        paths[path if path.startswith("/") else f"{WORKSPACE}/{path}"] = text if text.endswith("\n") else text + "\n"
    dirs = sorted({str(Path(p).parent) for p in paths})
    out = ["mkdir -p " + shlex.join(dirs)]
    for path, text in paths.items():
        if HEREDOC in text:
            raise ValueError(f"{path} contains the heredoc delimiter {HEREDOC}")
        out.append(f"IFS= read -r -d '' WEBSANDBOX_FILE <<'{HEREDOC}'\n{text}{HEREDOC}")
        out.append(f"printf '%s' \"$WEBSANDBOX_FILE\" > {shlex.quote(path)}")
    return "\n".join(out)


def _reference_file(task: TaskRow, path: str) -> str:
    from sandbox_env.constants import TASKS_DIR

    return (TASKS_DIR / task.family / task.task_id / "reference.py").read_text() if path == "app.py" else ""


def _reference_deliverables(task: TaskRow) -> dict[str, str]:
    from sandbox_env.constants import TASKS_DIR
    from sandbox_env.families.django import read_folder

    return read_folder(TASKS_DIR / task.family / task.task_id / "reference")


class FloorRunner:
    """Runs jobs one at a time in fresh containers and returns what each cost (Meter accounting)."""

    def __init__(self, image: str, meter: Meter) -> None:
        self.image = image
        self.meter = meter
        self.dc = docker_client()
        # the sandboxes' own root: the image's folders from the host where they are served (docker/host_tree.py)
        self.source, self.mounts = HostTrees(self.dc).for_image(image)

    def run(self, job: Job) -> float:
        """Core-seconds of one fresh container running `job`: cgroup + shim + FUSE + the SDK calls here."""
        labels = {LABEL: "bench", LABEL_PID: str(self.meter.root_pid), LABEL_ROLE: f"floor-{job.name}"}
        spec = container_spec(self.source, Limits(), labels, "floor", env=job.env, mounts=self.mounts)
        # the sandbox's flags, minus what only its agent needs: it starts as the sandbox user, no
        # capabilities, no stdin, and is removed here (after its last sample), not automatically
        spec.update(command=job.argv, stdin_open=False, user=SANDBOX_USER, working_dir=WORKSPACE, cap_add=[], auto_remove=False)
        spec.pop("detach", None)
        t0 = time.thread_time()
        c = self.dc.containers.create(**spec)
        try:
            c.start()
            status = c.wait(timeout=600)
            self.meter.sample_now()  # the shim (which reaped the container) and the FUSE daemon live until removal
            if status.get("StatusCode") != 0:
                raise RuntimeError(f"floor job {job.name} exited with {status}: {_logs_hint(job)}")
        finally:
            c.remove(force=True)
        host = time.thread_time() - t0
        return self.meter.total_of(c.id) + host

    def median(self, job: Job, reps: int) -> float:
        return statistics.median(self.run(job) for _ in range(reps))


def _logs_hint(job: Job) -> str:
    return "run its argv by hand in a container of the image: " + shlex.join(job.argv)[:300]


def measure(
    image: str, meter: Meter, tasks_by_family: dict[str, list[TaskRow]], reps: int = 3, say: Callable[[str], None] = print
) -> dict[str, dict[str, float]]:
    """Per family: the mean floor per task, and the lifecycle and import parts, in core-seconds."""
    runner = FloorRunner(image, meter)
    lifecycle = runner.median(Job("lifecycle", ["true"]), reps)
    say(f"  floor: one container lifecycle (`true`): {lifecycle:.3f} core-s")
    out: dict[str, dict[str, float]] = {}
    for family, tasks in tasks_by_family.items():
        imports = runner.median(Job("imports", [CONTAINER_PYTHON, "-c", IMPORTS[family]]), reps) - lifecycle
        shares = [[runner.run(job) for job in family_jobs(task)] for task in tasks]
        n_containers = len(shares[0])
        grading = statistics.mean(s[1] for s in shares) if n_containers > 1 else 0.0
        grader_alone = canaries = 0.0
        if family in ("fastapi", "django"):
            grader_alone = statistics.mean(runner.run(grader_job(t)) for t in tasks)
        if family == "django":
            canaries = statistics.mean(runner.run(canary_job(t)) for t in tasks) - grading
        out[family] = {
            "floor": statistics.mean(sum(s) for s in shares),
            "rollout_share": statistics.mean(s[0] for s in shares),
            "grading_share": grading,
            "grader_alone": grader_alone,
            "canaries": canaries,
            "lifecycle": lifecycle,
            "containers": n_containers,
            "imports": imports,
        }
        say(
            f"  floor: {family}: {out[family]['floor']:.3f} core-s per task over {len(tasks)} tasks "
            f"({n_containers} container(s); `{IMPORTS[family]}` alone {imports:.3f})"
            + (f"; grading share {grading:.3f}, the real grader program alone {grader_alone:.3f}" if grader_alone else "")
            + (f", of which canaries {canaries:.3f}" if canaries else "")
        )
    return out
