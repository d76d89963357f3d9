"""Grading sensitivity: every mutant of every reference must lose, or be declared equivalent.

    python build_tasks.py --verify --mutants      # per task: generated / killed / declared equivalent

A mutant is killed when the real grade gives it less than the reference's 1.0:
- orm: its rows differ. Mutants run cheaply: one sandbox, one session over the image's
  database (the same private copy a rollout gets), each mutant in the session's namespace as
  it was after the preamble, `result` probed and graded by the family's own `grade` on the
  host. A few verdicts are replayed through full scripted rollouts (`spot_check`), and every
  declared-equivalent mutant is among them: a survivor's verdict is the real path's.
- fastapi: at least one check fails; each mutant is graded by the family's real grader (one
  fresh grading container per mutant: the HTTP driver serves one app per run). On a task
  whose checks draw values ([[vary]]), a mutant is killed only when it loses on each of
  MUTANT_DRAWS gradings, each with its own draw.
- django: at least one visible (or hidden) test fails; each mutant's deliverables are graded
  by the family's real grader over the pristine tree.

A mutant that no database or request can tell apart from the reference is declared in the
task's task.toml, by name, with a one-line reason:

    [[equivalent_mutants]]
    name = "slice@3:42 upper :1->:2"
    reason = "SQLite reads the first row of a scalar subquery, so [:2] equals [:1]"

A declared name that is not generated, or that is killed, is an error (a stale declaration
would hide the next survivor). Any other survivor fails the run.

The closing line counts killed over non-equivalent mutants per family:
    sensitivity: orm 100.0% (N/N), fastapi 100.0% (N/N), django 100.0% (N/N)
"""

from __future__ import annotations

import asyncio
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox_env.constants import CONTAINER_PROGRAMS_DIR, TASKS_DIR
from sandbox_env.verify.mutants import (
    DJANGO_OPERATORS,
    FASTAPI_OPERATORS,
    ORM_OPERATORS,
    ORM_STATED_RULE_OPERATORS,
    Context,
    Mutant,
    generate,
    nullable_names_of,
    related_names_of,
)

MODELS_PY = CONTAINER_PROGRAMS_DIR / "orm_fixture" / "shop" / "models.py"
FAMILY_ORDER = ("orm", "fastapi", "django")
MUTANT_TIMEOUT = 60
MUTANT_DRAWS = 3  # gradings of a killed fastapi mutant on a task with [[vary]], each its own draw
SPOT_KILLS = 6  # killed mutants replayed through the full path per family, besides every survivor


@dataclass
class Outcome:
    mutant: Mutant
    killed: bool
    detail: str
    equivalent: str = ""  # the declared reason, when the task declares this mutant equivalent


@dataclass
class TaskSensitivity:
    task_id: str
    family: str
    outcomes: list[Outcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def generated(self) -> int:
        return len(self.outcomes)

    @property
    def killed(self) -> int:
        return sum(o.killed for o in self.outcomes)

    @property
    def equivalent(self) -> int:
        return sum(bool(o.equivalent) and not o.killed for o in self.outcomes)

    @property
    def survivors(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.killed and not o.equivalent]

    @property
    def ok(self) -> bool:
        return not self.problems and not self.survivors


# -- mutants of a task ----------------------------------------------------------------------


def declared_equivalents(folder: Path) -> dict[str, str]:
    """name -> reason, from the task's [[equivalent_mutants]]; a declaration without a reason is an error."""
    meta = tomllib.loads((folder / "task.toml").read_text())
    out: dict[str, str] = {}
    for entry in meta.get("equivalent_mutants", []):
        name, reason = str(entry.get("name", "")).strip(), str(entry.get("reason", "")).strip()
        if not name or not reason:
            raise ValueError(f"{folder.name}: every [[equivalent_mutants]] needs a name and a one-line reason")
        out[name] = reason
    return out


def orm_mutants(folder: Path) -> list[Mutant]:
    """The reference's mutants: every ORM operator's and those of the stated missing-value rules."""
    models = MODELS_PY.read_text()
    ctx = Context(related_names_of(models), nullable_names_of(models))
    return generate((folder / "reference.py").read_text(), {**ORM_OPERATORS, **ORM_STATED_RULE_OPERATORS}, ctx)


def fastapi_mutants(folder: Path) -> list[Mutant]:
    return generate((folder / "reference.py").read_text(), FASTAPI_OPERATORS)


def django_mutants(folder: Path, deliverables: list[str]) -> list[Mutant]:
    """Mutants of each deliverable; the name starts with the file's path, the source is that file's."""
    out: list[Mutant] = []
    for path in deliverables:
        source = (folder / "reference" / path).read_text()
        out += generate(source, DJANGO_OPERATORS, prefix=f"{path}:")
    return out


def mutants_of(family: str, folder: Path, task: Any) -> list[Mutant]:
    if family == "orm":
        return orm_mutants(folder)
    if family == "fastapi":
        return fastapi_mutants(folder)
    if family == "django":
        return django_mutants(folder, list(task.collect))
    return []


def settle(result: TaskSensitivity, folder: Path) -> None:
    """Attach declared reasons; record stale declarations (not generated, or killed) as problems."""
    try:
        declared = declared_equivalents(folder)
    except ValueError as exc:
        result.problems.append(str(exc))
        return
    by_name = {o.mutant.name: o for o in result.outcomes}
    for name, reason in declared.items():
        outcome = by_name.get(name)
        if outcome is None:
            result.problems.append(f"declared equivalent {name!r} is not a mutant of the reference")
        elif outcome.killed:
            result.problems.append(f"declared equivalent {name!r} is killed: remove the declaration")
        else:
            outcome.equivalent = reason


# -- orm: many mutants in one session -------------------------------------------------------

_BASE = "__websandbox_base"
BASE_CELL = f"{_BASE} = dict(globals())"
RESET_CELL = f"[globals().pop(__k) for __k in [k for k in globals() if k not in {_BASE}]]\nglobals().update({_BASE})"


class OrmSession:
    """One sandbox with the orm session; evaluates cells in the namespace the preamble left."""

    def __init__(self, client: Any, image: str) -> None:
        self.backend, self.image = client, image
        self.sid: str | None = None

    async def __aenter__(self) -> OrmSession:
        from sandbox_env.families.orm import start_session
        from sandbox_env.sandbox import Sandbox

        self.sid = await self.backend.acquire(self.image)
        self.sb = Sandbox(self.backend, self.sid)
        await start_session(self.sb, copy_image_db=True)
        await self._base()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.sid is not None:
            await self.backend.delete(self.sid)

    async def _base(self) -> None:
        out = await self.sb.run_python(BASE_CELL)
        if out.output.strip():
            raise RuntimeError(f"the orm session could not record its namespace: {out.output[-400:]}")

    async def grade(self, code: str, task: Any) -> Any:
        """The real grade of a cell's `result`, the cell run in a namespace fresh from the preamble."""
        from sandbox_env.families.orm import FAMILY

        reset = await self.sb.run_python(RESET_CELL)
        if reset.restarted or reset.timed_out or reset.output.strip():
            await self._base()
        run = await self.sb.run_python(code, timeout=MUTANT_TIMEOUT)
        tagged = await self.sb.probe("result")
        if run.restarted or run.timed_out:  # the preamble ran again: record the namespace again
            await self._base()
        return await FAMILY.grade({"result": tagged}, task, None)


async def run_orm(client: Any, image: str, folders: list[Path]) -> list[TaskSensitivity]:
    """Every orm task's mutants in one session; the reference must score 1.0 there first."""
    from sandbox_env.families.orm import FAMILY

    results = []
    async with OrmSession(client, image) as session:
        for folder in folders:
            t0 = time.perf_counter()
            task = FAMILY.compile_task(folder)
            res = TaskSensitivity(task.task_id, "orm")
            ref = await session.grade((folder / "reference.py").read_text(), task)
            if ref.score != 1.0:
                res.problems.append(f"the reference scores {ref.score} in the mutant session: {ref.reason}")
            for mutant in orm_mutants(folder):
                grade = await session.grade(mutant.source, task)
                res.outcomes.append(Outcome(mutant, grade.score < 1.0, grade.reason))
            settle(res, folder)
            res.seconds = time.perf_counter() - t0
            results.append(res)
    return results


async def spot_check(client: Any, image: str, results: list[TaskSensitivity], kills: int = SPOT_KILLS) -> list[str]:
    """Replay every survivor and a spread of kills through full scripted rollouts; return disagreements."""
    from sandbox_env.families import get_family
    from sandbox_env.verify.scripted import scripted_rollout

    chosen: list[tuple[TaskSensitivity, Outcome]] = []
    killed = [(r, o) for r in results for o in r.outcomes if o.killed]
    step = max(1, len(killed) // kills) if killed else 1
    chosen += killed[::step][:kills]
    chosen += [(r, o) for r in results for o in r.outcomes if not o.killed]
    sem = asyncio.Semaphore(2)

    async def one(res: TaskSensitivity, outcome: Outcome) -> str:
        folder = TASKS_DIR / res.family / res.task_id
        task = get_family(res.family).compile_task(folder)
        calls = [{"tool": "execute_code", "args": {"code": outcome.mutant.source}}]
        async with sem:
            run = await scripted_rollout(client, image, task, calls, timeout=MUTANT_TIMEOUT)
        real_killed = run.grade.score < 1.0
        if run.grade.scoring_error or real_killed != outcome.killed:
            return (
                f"{res.task_id} {outcome.mutant.name}: the cheap path says "
                f"{'killed' if outcome.killed else 'survives'}, the full path scores {run.grade.score} "
                f"({run.grade.scoring_error or run.grade.reason})"
            )
        return ""

    found = await asyncio.gather(*(one(r, o) for r, o in chosen))
    return [f for f in found if f]


# -- fastapi and django: each mutant through the real grader --------------------------------


async def _grade_each(
    family_name: str, folder: Path, task: Any, grader: Any, files_of: Any, sem: asyncio.Semaphore
) -> TaskSensitivity:
    from sandbox_env.families import grade_final

    t0 = time.perf_counter()
    res = TaskSensitivity(task.task_id, family_name)
    mutants = mutants_of(family_name, folder, task)

    async def one(mutant: Mutant) -> Outcome:
        async with sem:
            grade = await grade_final(task, {"files": files_of(mutant)}, grader)
        if grade.scoring_error:  # a harness fault says nothing about the mutant: once more
            async with sem:
                grade = await grade_final(task, {"files": files_of(mutant)}, grader)
        if family_name == "fastapi" and task.grading.get("vary"):
            for _ in range(MUTANT_DRAWS - 1):  # killed on every draw, not on a lucky one
                if grade.scoring_error or grade.score >= 1.0:
                    break
                async with sem:
                    grade = await grade_final(task, {"files": files_of(mutant)}, grader)
        if grade.scoring_error:
            res.problems.append(f"{mutant.name}: harness fault: {grade.scoring_error}")
        failing = [c["name"] for c in grade.checks if not c["passed"]]
        detail = f"{grade.score:.2f}: " + ("; ".join(failing[:2]) if failing else grade.reason)
        return Outcome(mutant, grade.score < 1.0 and not grade.scoring_error, detail[:300])

    res.outcomes = list(await asyncio.gather(*(one(m) for m in mutants)))
    settle(res, folder)
    res.seconds = time.perf_counter() - t0
    return res


async def run_fastapi(client: Any, image: str, folders: list[Path], concurrency: int) -> list[TaskSensitivity]:
    from sandbox_env.families.fastapi import APP_PATH, FAMILY
    from sandbox_env.grading.grader import Grader

    grader = Grader(client, image)
    sem = asyncio.Semaphore(concurrency)
    jobs = []
    for folder in folders:
        task = FAMILY.compile_task(folder)
        jobs.append(_grade_each("fastapi", folder, task, grader, lambda m: {APP_PATH: m.source}, sem))
    return list(await asyncio.gather(*jobs))


async def run_django(client: Any, image: str, folders: list[Path], concurrency: int) -> list[TaskSensitivity]:
    from sandbox_env.families.django import FAMILY
    from sandbox_env.grading.grader import Grader
    from sandbox_env.verify.django import VERIFIER

    grader = Grader(client, image)
    sem = asyncio.Semaphore(concurrency)
    jobs = []
    for folder in folders:
        task = FAMILY.compile_task(folder)
        reference = VERIFIER.solution_files(folder)

        def files_of(m: Mutant, reference: dict[str, str] = reference) -> dict[str, str]:
            path = m.name.split(":", 1)[0]
            return {**reference, path: m.source}

        jobs.append(_grade_each("django", folder, task, grader, files_of, sem))
    return list(await asyncio.gather(*jobs))


# -- the report -----------------------------------------------------------------------------


def family_figure(results: list[TaskSensitivity]) -> tuple[int, int]:
    """(killed, non-equivalent) over a family's tasks."""
    killed = sum(r.killed for r in results)
    return killed, sum(r.generated - r.equivalent for r in results)


def sensitivity_line(by_family: dict[str, list[TaskSensitivity]]) -> str:
    cells = []
    for name in FAMILY_ORDER:
        if name not in by_family:
            continue
        killed, total = family_figure(by_family[name])
        pct = 100.0 * killed / total if total else 100.0
        cells.append(f"{name} {pct:.1f}% ({killed}/{total})")
    return "sensitivity: " + ", ".join(cells)


def report_lines(by_family: dict[str, list[TaskSensitivity]]) -> tuple[list[str], bool]:
    """Per task: generated / killed / declared equivalent, then each survivor and problem; ok=all clean."""
    lines, ok = [], True
    for name in FAMILY_ORDER:
        for r in by_family.get(name, []):
            flag = "ok" if r.ok else "FAIL"
            lines.append(
                f"  {r.task_id:<34} generated {r.generated:3d}  killed {r.killed:3d}  "
                f"equivalent {r.equivalent:2d}  {flag}  ({r.seconds:.1f}s)"
            )
            for o in r.survivors:
                lines.append(f"      survivor: {o.mutant.name}  [{o.detail}]")
            for p in r.problems:
                lines.append(f"      problem: {p}")
            ok = ok and r.ok
    return lines, ok


async def run_sensitivity(
    client: Any, image: str, families: list[str], task_ids: list[str] | None, concurrency: int = 2
) -> tuple[dict[str, list[TaskSensitivity]], list[str]]:
    """Every chosen family's mutants; returns results by family and the spot-check disagreements."""
    by_family: dict[str, list[TaskSensitivity]] = {}
    disagreements: list[str] = []
    for name in FAMILY_ORDER:
        if name not in families:
            continue
        folders = sorted(
            p for p in (TASKS_DIR / name).iterdir() if (p / "task.toml").is_file() and (not task_ids or p.name in task_ids)
        )
        if not folders:
            continue
        if name == "orm":
            by_family[name] = await run_orm(client, image, folders)
            disagreements += await spot_check(client, image, by_family[name])
        elif name == "fastapi":
            by_family[name] = await run_fastapi(client, image, folders, concurrency)
        else:
            by_family[name] = await run_django(client, image, folders, concurrency)
    return by_family, disagreements


def print_report(by_family: dict[str, list[TaskSensitivity]], disagreements: list[str], seconds: float) -> bool:
    lines, ok = report_lines(by_family)
    print("\nmutants (generated / killed / declared equivalent)", flush=True)
    for line in lines:
        print(line)
    for d in disagreements:
        print(f"  spot check disagrees: {d}")
    ok = ok and not disagreements
    print(f"mutant runs took {seconds:.0f} s; {'every mutant is killed or declared' if ok else 'SURVIVORS OR PROBLEMS'}")
    print(sensitivity_line(by_family), flush=True)
    return ok


async def main_mutants(rows: list[Any], concurrency: int) -> bool:
    """build_tasks.py --mutants: the chosen rows' families and tasks; prints the report, returns ok."""
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    image = await asyncio.to_thread(ensure_image)
    client = make_backend()
    families = list(dict.fromkeys(r.family for r in rows))
    ids = [r.task_id for r in rows]
    t0 = time.perf_counter()
    try:
        by_family, disagreements = await run_sensitivity(client, image, families, ids, concurrency)
    finally:
        client.teardown()
    return print_report(by_family, disagreements, time.perf_counter() - t0)
