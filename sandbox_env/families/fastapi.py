"""The fastapi family: the model writes /workspace/app.py exposing `app`; real requests grade it.

Task source: sandbox_env/tasks/fastapi/<id>/
  task.toml     id, difficulty, category, title, spec (the written specification), and
                [[checks]] in the check language of fastapi_checks.py (2 to 6 checks; a
                composed task, below, up to 14).
                Optional: files (a table of starting files), openapi_url (default
                "/openapi.json"; "" when the app serves none), catch_all (true when the spec
                itself asks for a route matching every path, which turns off the unknown-path
                canaries).
                [[vary]]: values the checks send that are drawn afresh for every grading
                (fastapi_vary.py).
  reference.py  the reference app; it must score 1.0.

The composed tier. A task with a [composed] table is one app over one domain that combines
several single-feature tasks: route-local features on routers of their own prefixes, and one
or two app-wide features whose effect on the others is the point (a validation answer that
every router's 422 takes, a dependency on one router only, a middleware wrapping errors too,
startup state several routers read). The table lists `components` (the single tasks it
combines), `app_wide` (those features) and `interaction_checks` (names of checks that test an
app-wide feature's effect on a component); all three land in the row's measures, and the task
is `hard`. Its checks are the components' checks rewritten for the prefixes plus the
interaction checks, hence a higher cap. The caps live in CHECK_CAPS and nowhere else.

Drawn values (fastapi_vary.py). Optional [[vary]] tables in task.toml name the values the
checks send and expect back; each grading draws new ones (random.SystemRandom) and
substitutes them in every request and expectation before anything else, so there is no
fixed answer key to replay. grading["vary"] records the declarations.

Grading. The host turns every check into one session of requests; every session runs
against a freshly imported app.py in its own process. Canary requests made up on the
host at grading time (random unknown paths, and GET /openapi.json sent exactly as a check
sends it) are slipped into random sessions at random places, and the sessions are sent
in a random order, so neither position nor request tells them apart. (The document's
canary carries nothing a check's read of the document lacks, such as an extra query
parameter: an app could otherwise serve the canary one document and the checks another.) The driver
(runtime/grader/http_driver.py) reports raw responses; the host evaluates expectations (which
never enter a container) and judges canaries (fastapi_checks.judge_canaries). Reward =
the fraction of checks passing.

Where the answers are recorded. The app is served by uvicorn on a unix socket in a
process of its own (runtime/grader/app_host.py forks one per session); the driver, another
process that imports nothing of the submission, sends the requests with its own httpx
client and records what comes back. The driver and the app host are undumpable, so the
app cannot read their memory (the nonce) or write into their descriptors (the report):
patching the driver's functions or its client from app.py is impossible, not merely
detected. A witness (an ASGI layer around the app, in the app's process) is kept as a
cross-check: a response whose status the witness did not see the app send, or junk on
the witness's pipe, is tampering (0.0, tampered = True), as are canaries that come out
wrong.

Who is at fault when no final report comes back. The driver writes framed progress notes
("started", "importing", "serving") on the private report channel. If the last one is
"importing" or "serving", the app's processes could have stopped the driver or outlasted
the limit: the submission's failure, score 0.0, no scoring_error. Not so with exit code 0:
the driver exits 0 only right after writing its final report (an app that exits at import
ends only its own process, and the driver reports that), so a 0 under an earlier note is a
report lost on its way to the host: a scoring_error. A driver killed by a
signal there is the submission's only where the app could send it: the notes say
`"fenced"` when every app process runs behind the signal fence (runtime/grader/process_guard.py:
no signal of its reaches the driver or the app host), and then the signal came from the kernel or
from outside the sandbox: a scoring_error, retried, unless the host's trace of the run
(`result.usage`, which the app cannot touch) shows the sandbox's own processes pushing its
limits (blame.limits_hit: an OOM kill, refused forks, memory at its limit, a swarm): then
the kernel killed it for what the app did, the submission's 0.0. If there is no frame at all, or the last one is
"started", the driver itself failed before reaching the app: a scoring_error.

Limits count the app's own time (CPU, or wall time minus time spent waiting for a CPU),
not the wall clock: each step's, and the run's (`deadline`); when only the run's wall-clock
backstop (GRADING_BACKSTOP_FACTOR deadlines) is hit before the app was active for its
deadline, the driver reports the container starved (http_driver.py). That clock runs
inside the container, beside the app, so the host confirms it with its own evidence
(blame.judge_backstop over the cgroup trace of the run): a sandbox whose processes consumed
the deadline in CPU, or in the last LIMIT_WINDOW seconds used its CPU, waited on itself or
hit its limits, makes it the submission's 0.0, with the host's reason; only a starved one
is a scoring_error. No trace (nothing measured) keeps the scoring_error. A driver that
stopped the run because the events pipe carried more than the witness writes (cross_check)
is tampering, whatever stage the run had reached.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox_env.constants import GRADING_BACKSTOP_FACTOR
from sandbox_env.families.base import Grade, TaskRow, collect_files, read_task_toml
from sandbox_env.families.base import composed_measures as base_composed_measures
from sandbox_env.families.fastapi_checks import (
    CheckError,
    describe_request,
    evaluate_check,
    judge_canaries,
    lay_out,
    make_canaries,
    normalize_check,
    passes_for_catch_all,
    witness_problems,
)
from sandbox_env.families.fastapi_vary import VaryError, drawn_checks, normalize, require_drawn_echoes, validate
from sandbox_env.grading.grader import Grader, ReportError
from sandbox_env.sandbox import ExecResult, Sandbox
from sandbox_env.sandbox.blame import LIMIT_WINDOW, Verdict, judge_backstop, limits_hit

APP_PATH = "app.py"
REQUEST_TIMEOUT = 10.0
MIN_CHECKS, MAX_CHECKS = 2, 6
CHECK_CAPS = {"single": MAX_CHECKS, "composed": 14}  # the most checks a task of each tier may have

PROMPT_TAIL = """\
Deliverable: write the application to /workspace/app.py. The module must expose the
application as a module-level variable named `app`; it is imported as a module, not run
as a script (no uvicorn.run needed).

How it is checked: `app` is served by uvicorn in its own process (lifespan startup and
shutdown run) and real HTTP requests are sent to it, as a TestClient sends them (host
testserver, cookies kept within a group of requests), and some checks read the
generated OpenAPI document at GET /openapi.json, so declare parameters, bodies and
responses the way FastAPI documents them. Each group of requests starts from a freshly
imported app.py, so data kept in memory starts empty for each group. Every request must
be answered within 10 seconds. Available: Python 3.13, FastAPI 0.165, Starlette 1.10,
Pydantic 2.14, python-multipart; no network and no other packages."""


def build_prompt(meta: dict[str, Any]) -> str:
    title = meta.get("title", "").strip()
    head = f"# {title}\n\n" if title else ""
    return f"{head}{meta['spec'].strip()}\n\n{PROMPT_TAIL}"


class FastAPIFamily:
    name = "fastapi"

    def compile_task(self, folder: Path) -> TaskRow:
        meta = read_task_toml(folder)
        raw_checks = meta.get("checks") or []
        tier = "composed" if "composed" in meta else "single"
        cap = CHECK_CAPS[tier]
        if not MIN_CHECKS <= len(raw_checks) <= cap:
            raise CheckError(f"{folder.name}: a {tier} task needs {MIN_CHECKS} to {cap} checks, has {len(raw_checks)}")
        checks = [normalize_check(c, f"{folder.name} check {i + 1}") for i, c in enumerate(raw_checks)]
        names = [c["name"] for c in checks]
        if len(set(names)) != len(names):
            raise CheckError(f"{folder.name}: check names must be unique")
        measures = composed_measures(meta, names, folder.name) if tier == "composed" else {}
        weak = [c["name"] for c in checks if passes_for_catch_all(c)]
        if weak:
            raise CheckError(f"{folder.name}: an app answering 200 {{}} everywhere would pass {weak}")
        if not (folder / "reference.py").is_file():
            raise CheckError(f"{folder.name}: no reference.py")
        vary = normalize(meta.get("vary") or [], folder.name)
        try:
            validate(vary, checks, meta["spec"], folder.name)
            require_drawn_echoes(checks, vary, meta["spec"], folder.name)  # no check a recorded answer passes
        except VaryError as exc:
            raise CheckError(str(exc)) from exc
        return TaskRow(
            task_id=meta["id"],
            family=self.name,
            difficulty=meta["difficulty"],
            category=meta["category"],
            prompt=build_prompt(meta),
            files=dict(meta.get("files", {})),
            collect=list(meta.get("collect", [APP_PATH])),
            grading={
                "checks": checks,
                "openapi_url": meta.get("openapi_url", "/openapi.json"),
                "catch_all": bool(meta.get("catch_all", False)),
                "request_timeout": REQUEST_TIMEOUT,
                # values drawn afresh for every grading (fastapi_vary.py); [] when none
                "vary": vary,
            },
            measures=measures,
        )

    async def setup(self, sb: Sandbox, task: TaskRow) -> None:
        if task.files:
            await sb.write_files(dict(task.files))
        await sb.start_python()

    async def collect(self, sb: Sandbox, task: TaskRow) -> dict[str, Any]:
        return await collect_files(sb, task.collect or [APP_PATH])

    async def grade(self, final: dict[str, Any], task: TaskRow, grader: Grader) -> Grade:
        files = {p: s for p, s in (final.get("files") or {}).items() if s is not None}
        plan = plan_grading(task, grader.timeout)
        if APP_PATH not in files:
            return _failed(plan.checks, "/workspace/app.py does not exist", imported=False)
        try:
            result, report = await grader.run_program("http_driver.py", plan.request, files, timeout=grader.timeout)
        except ReportError as exc:
            return Grade.harness_fault(f"the HTTP driver never reached the app: {exc}")
        return judge_report(plan, task, report, result)


@dataclass
class GradingPlan:
    """What one grading sends, drawn on the host: the checks with their drawn values, the canaries, their layout."""

    checks: list[dict[str, Any]]
    canaries: list[dict[str, Any]]
    layout: list[list[tuple[str, int, int]]]
    openapi_url: str
    request: dict[str, Any]  # the HTTP driver's request (sessions, limits)


def plan_grading(task: TaskRow, timeout: float) -> GradingPlan:
    """One grading's draws: this grading's values for the task's [[vary]] tokens (no fixed answer key to
    replay), canaries made up now, and a random layout of both into sessions."""
    rng = random.SystemRandom()
    checks, _ = drawn_checks(task.grading, task.prompt, rng)
    openapi_url = task.grading.get("openapi_url", "/openapi.json")
    canaries = make_canaries(rng, openapi_url, task.grading.get("catch_all", False))
    layout = lay_out(checks, len(canaries), rng)

    def request_of(tag: tuple[str, int, int]) -> dict[str, Any]:
        kind, a, b = tag
        return canaries[a]["request"] if kind == "canary" else checks[a]["steps"][b]["request"]

    deadline = max(3.0, timeout - max(10.0, 0.25 * timeout))  # of active time: room to report before the run's limit
    request = {
        "sessions": [[request_of(t) for t in session] for session in layout],
        "request_timeout": task.grading.get("request_timeout", REQUEST_TIMEOUT),
        "deadline": deadline,
        "backstop": GRADING_BACKSTOP_FACTOR * deadline,
    }
    return GradingPlan(checks, canaries, layout, openapi_url, request)


def judge_report(plan: GradingPlan, task: TaskRow, report: dict[str, Any], result: ExecResult) -> Grade:
    """The grade of one driver report (`result`: the grading program's run, for the host's own evidence)."""
    checks = plan.checks
    if report.get("stage") != "done":
        return _unfinished(checks, report, result)
    if report.get("stalled"):
        st = report["stalled"]
        if st.get("blame") == "harness":
            said = (
                f"the run passed its {st.get('backstop', 0):g} s wall-clock backstop at {st.get('what')} "
                f"while the app had been active for only {st.get('active', 0):g} s of its {st.get('limit'):g} s "
                "by the driver's clock"
            )
            verdict = _hosts_verdict(result, float(st.get("limit") or 0))
            if verdict is not None and verdict.submission:
                return _failed(
                    checks,
                    f"{said}, but the host's measure of the grading sandbox says it was not starved: {verdict.why}",
                    imported=bool(report.get("imported")),
                )
            why = verdict.why if verdict is not None else "the sandbox's CPU use could not be measured"
            return Grade.harness_fault(f"{said}: the container was starved of CPU ({why})")
        return _failed(
            checks,
            f"the run was stopped: {st.get('what')} did not finish within {st.get('limit'):g} s",
            imported=bool(report.get("imported")),
        )
    if report.get("cross_check") and not (report.get("imported") and report.get("has_app")):
        problems = [str(p) for p in report["cross_check"]]  # stopped before any answer: nothing else to judge
        rows = [{"name": c["name"], "passed": False, "detail": "not run: tampered"} for c in checks]
        metrics = {"module_imported": float(bool(report.get("imported"))), "checks_passed": 0.0, "tampered": 1.0}
        return Grade(0.0, "tampered: " + "; ".join(problems), rows, metrics, tampered=True)
    if not report.get("imported"):
        error = (report.get("import_error") or "").strip()
        last = error.splitlines()[-1] if error else "unknown error"
        return _failed(checks, f"app.py failed to import: {last}", imported=False, detail=error)
    if not report.get("has_app"):
        return _failed(checks, "app.py imported, but it defines no module-level `app`", imported=True)
    scoring = (task.grading.get("scoring", FRACTION), task.grading.get("rule_checks"))
    return _score(checks, plan.canaries, plan.layout, report, plan.openapi_url, scoring)


def composed_measures(meta: dict[str, Any], check_names: list[str], where: str) -> dict[str, Any]:
    """A composed task's structure, from its [composed] table (families/base.py reads it for every family)."""
    return base_composed_measures(meta, check_names, where, CheckError)


def _unfinished(checks: list[dict[str, Any]], report: dict[str, Any], result: ExecResult) -> Grade:
    """The grade of a driver whose last frame is a progress note: who ended it, on the evidence.

    The driver ends with exit code 0 only from its final report (report_channel.send writes
    it whole, then exits): an exit code 0 under an earlier note means the report was lost on
    its way to the host, never the app's doing (the app imports and serves in processes of
    its own). A signal the app's fenced processes cannot send is the kernel's or the host's
    (limits_hit tells the kernel's for what the app did). What is left, the driver outlasting
    its limit or ended while the app could reach it, is the app's.
    """
    stage = report.get("stage")
    how = "did not finish within the grading limit" if result.timed_out else f"ended it (exit code {result.exit_code})"
    if not result.timed_out and result.exit_code == 0:
        return Grade.harness_fault(
            f"the HTTP driver exited after its final report (exit code 0), but the last frame that reached the "
            f"host says stage {stage!r}: the report was lost on its way out of the grading sandbox"
        )
    if report.get("fenced") and not result.timed_out and result.exit_code < 0:
        killed = f"the HTTP driver was killed by signal {-result.exit_code} at stage {stage!r}"
        own = limits_hit(result.usage.whole() if result.usage is not None else None)
        if own:  # the kernel killed it for what the app's processes did to the sandbox
            return _failed(checks, f"{killed}: {own}", imported=stage == "serving")
        return Grade.harness_fault(
            f"{killed}, which the app's fenced processes cannot send: the kernel or something outside the sandbox killed it"
        )
    if stage == "importing":
        return _failed(checks, f"importing app.py {how} before any report was made", imported=False)
    if stage == "serving":
        return _failed(checks, f"the app, while serving requests, {how} before any report was made", imported=True)
    return Grade.harness_fault(f"the HTTP driver stopped at stage {stage!r} ({how})")


def _hosts_verdict(result: ExecResult, deadline: float) -> Verdict | None:
    """The host's own judgement of a backstop the driver blamed on the harness; None without evidence.

    Judged like every backstop (blame.judge_backstop): by the grading sandbox's cgroup trace,
    which the app cannot touch: the CPU it consumed over the run, and its last seconds.
    """
    if result.usage is None:
        return None
    recent = result.usage.over_last(min(deadline, LIMIT_WINDOW) if deadline > 0 else LIMIT_WINDOW)
    return judge_backstop(result.usage.whole(), recent, deadline)


def _failed(checks: list[dict[str, Any]], reason: str, *, imported: bool, detail: str = "") -> Grade:
    """Every check failed for one reason that is the submission's, not the harness's."""
    text = detail or reason
    rows = [{"name": c["name"], "passed": False, "detail": f"not run: {text}"} for c in checks]
    return Grade(0.0, reason, rows, {"module_imported": float(imported), "checks_passed": 0.0, "tampered": 0.0})


FRACTION, ALL_CHECKS, RULES_GATE = "fraction", "all", "rules_gate"  # grading["scoring"]
RULE_GATE = 0.5  # a composed task's reward while one of its app-wide rules does not hold, as a share of its fraction


def reward(rows: list[dict[str, Any]], scoring: str, rule_checks: list[str] | None = None) -> tuple[float, str]:
    """The score of checked rows under a task's scoring rule, and what the rule did (empty when nothing).

    `fraction` (hand-written tasks): the share of checks that pass. `all` (repair tasks): 1.0 only when
    every check passes; the broken app already passes most of them, so a share would pay for leaving it
    as it is. `rules_gate` (composed tasks): the share, halved while any check of an app-wide rule fails
    (`rule_checks`: the rules' own checks and the part checks a rule rewrote, generate/compose_store.py),
    so an app without the rule that ties its parts together loses at least half the reward.
    """
    passed = sum(r["passed"] for r in rows)
    fraction = passed / len(rows)
    if scoring == ALL_CHECKS and passed < len(rows):
        return 0.0, "a repair scores only when every check passes"
    if scoring == RULES_GATE:
        governed = set(rule_checks or ())
        if any(not r["passed"] for r in rows if r["name"] in governed):
            return fraction * RULE_GATE, "an app-wide rule does not hold: the score is halved"
    return fraction, ""


def _score(
    checks: list[dict[str, Any]],
    canaries: list[dict[str, Any]],
    layout: list[list[tuple[str, int, int]]],
    report: dict[str, Any],
    openapi_url: str,
    scoring: tuple[str, list[str] | None] = (FRACTION, None),
) -> Grade:
    sessions = report.get("sessions") or []
    step_resp: dict[tuple[int, int], dict[str, Any]] = {}
    canary_resp: list[dict[str, Any] | None] = [None] * len(canaries)
    check_error: dict[int, str | None] = {}
    for tags, session in zip(layout, sessions + [None] * (len(layout) - len(sessions)), strict=True):
        responses = (session or {}).get("responses") or []
        for tag, resp in zip(tags, responses, strict=False):
            if tag[0] == "canary":
                canary_resp[tag[1]] = resp
            else:
                step_resp[(tag[1], tag[2])] = resp
        for tag in tags:
            if tag[0] == "step":
                check_error[tag[1]] = (session or {}).get("error") or (None if session else "the session did not run")
    rows = []
    for ci, check in enumerate(checks):
        responses = []
        for si in range(len(check["steps"])):
            if (ci, si) not in step_resp:
                break
            responses.append(step_resp[(ci, si)])
        rows.append(evaluate_check(check, responses, check_error.get(ci)))
    passed = sum(r["passed"] for r in rows)
    fraction = passed / len(checks)
    metrics = {"module_imported": 1.0, "checks_passed": fraction, "tampered": 0.0}
    check_openapi = [
        resp
        for (ci, si), resp in step_resp.items()
        if checks[ci]["steps"][si]["request"]["method"] == "GET" and checks[ci]["steps"][si]["request"]["path"] == openapi_url
    ]
    labelled = [(describe_request(checks[ci]["steps"][si]["request"]), r) for (ci, si), r in step_resp.items()]
    labelled += [(describe_request(c["request"]), r) for c, r in zip(canaries, canary_resp, strict=True)]
    problems = [f"the app replaced {name}" for name in report.get("integrity") or []]
    problems += [str(p) for p in report.get("cross_check") or []]
    problems += witness_problems(labelled)
    problems += judge_canaries(canaries, canary_resp, openapi_url, check_openapi)
    if problems:
        metrics["tampered"] = 1.0
        return Grade(0.0, "tampered: " + "; ".join(problems), rows, metrics, tampered=True)
    failing = [r["name"] for r in rows if not r["passed"]]
    score, rule = reward(rows, *scoring)
    reason = (
        f"{passed}/{len(checks)} checks pass"
        + (f"; {rule}" if rule else "")
        + (f"; failing: {', '.join(failing)}" if failing else "")
    )
    return Grade(score, reason, rows, metrics)


FAMILY = FastAPIFamily()
