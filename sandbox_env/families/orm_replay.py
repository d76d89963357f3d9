"""Grading an orm answer by its code: the rollout's cells run again over grading worlds no rollout has seen.

The rows a rollout leaves are compared as they always were (families/orm.py). Rows can be
replayed, though: the rollout's database is one of the image's fixture variants, which
code can recognise from inside, and a method that is wrong in general (an average of
averages) can equal the expected rows on one variant. So the code is graded too: every
`execute_code` cell of the rollout, recorded on the host as the model sent it
(rollout/core.py's Lease), runs again in order in a fresh grading sandbox, in a new
session over a grading world, and `result` must equal that world's expected rows.

Grading worlds. Drawn on the host per grading (`secrets`), never stored: a copy of the image's
database of the world the task's rows come from (the hand-written fixture, or one of the task's
admitted seeded worlds) plus new publishers, authors, genres, stores and books, and sales and
reviews, drawn from a fresh key (runtime/container/orm_fixture/private.py); every base row stays,
so everything a spec names keeps its meaning. No file anywhere holds their rows and no rollout
has seen them, so they can be neither replayed nor looked up.

Expected rows. The task's reference cell, run in the same grading sandbox before any cell of
the submission, twice on each world: as it is, and with SQLite's `reverse_unordered_selects`
on, which reverses every unordered scan. A world on which the two differ has a tie the spec
leaves open (the reference's order there is an accident of storage) and is not used.
A world counts only where its rows differ from the rollout's own expected rows too: there,
rows carried over from the rollout (typed in, recognised, looked up) cannot match. WORLDS
worlds are drawn, then more, drawn stronger (more rows, often at the ends of each range, so
that they reach the first rows of an order), up to CANDIDATES in all, while fewer are usable;
`replay_worlds` in a grade's metrics says how many graded. A task on which no world is usable
keeps the row comparison alone (verification reports such tasks).

Collection (the choice the family's contract leaves open): the cells as the host received
them, over the final /workspace (its Python files, so a cell that runs a file the model
fixed with bash runs the fixed file) and, for a repair task, after its broken setup cell,
as the rollout started. bash commands are not run again: the prompt says so. A sandbox
the model's processes ended during a call started a fresh session, so only the cells
after the last such ending are recorded.

Blame. Everything before the submission's first cell (the sandbox, the world builds, the
reference runs, the first session start) is the harness's: a failure there is a harness
fault. From the first cell on, whatever happens in the sandbox is the submission's: a
session that will not start again, a cell that ends the sandbox, a `result` that is
missing or malformed, scores 0 for that world. A cell's limit is the tool call's, counted
in active time by the in-container clock, as in the rollout.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from sandbox_env.constants import CONTAINER_PYTHON, CONTAINER_RUNTIME, DEFAULTS, GRADING_BACKSTOP_FACTOR
from sandbox_env.families.base import TaskRow
from sandbox_env.families.orm_compare import compare, decode_result
from sandbox_env.families.orm_session import SESSION_DB, SESSION_ENV, image_db, session_preamble
from sandbox_env.grading.grader import Grader
from sandbox_env.sandbox import Sandbox, SandboxError, SandboxStarved
from sandbox_env.sandbox.blame import LIMIT_WINDOW, limits_hit

WORLDS = 2  # grading worlds a grade needs
CANDIDATES = 4  # drawn at most per grading: a world whose reference rows depend on storage order is not used
STRONGER = 3  # the strength of worlds drawn after the first round
WORLD_DIR = "/tmp/websandbox-worlds"
FIRST_SEED = 100  # runtime/container/orm_fixture/build.py: a base at or above it is a seeded world
BUILD_SECONDS = 180.0
SETUP_CELL_SECONDS = 60.0
BUILD_PROGRAM = (
    "import json, sys\n"
    f"sys.path.append({CONTAINER_RUNTIME!r})\n"
    "from orm_fixture.private import build_private_world\n"
    "for spec in json.loads(sys.stdin.read()):\n"
    "    build_private_world(spec['path'], spec['base'], spec['key'], spec['source'], spec['strength'])\n"
)
SWITCH_WORLD = (  # the reference's session moves to another world: a fresh copy under the session's database
    "import shutil as _sh\nfrom django.db import connection as _c\n_c.close(); _sh.copyfile({world!r}, {session!r})\n"
    "_c.cursor().execute('PRAGMA reverse_unordered_selects = {flag}'); del _sh, _c\n"
)


class ReplayFault(RuntimeError):
    """The harness failed before any cell of the submission ran."""


@dataclass(frozen=True)
class World:
    base: int  # 0: the hand-written fixture; a seed of 100 and up: that seeded world
    key: str  # drawn per grading, on the host
    strength: int = 1  # how much is drawn (orm_fixture/private.py `new_rows`)

    @property
    def path(self) -> str:
        return f"{WORLD_DIR}/{self.key}.sqlite3"


def draw_worlds(task: TaskRow, n: int, strength: int = 1) -> list[World]:
    """`n` grading worlds for `task`: its own kind of world with rows drawn from fresh keys."""
    admitted = sorted(int(k) for k in task.grading.get("fixture_variants") or {"0": None})
    seeded = [v for v in admitted if v >= FIRST_SEED]
    return [World(secrets.choice(seeded) if seeded else 0, secrets.token_hex(12), strength) for _ in range(n)]


@dataclass
class Replay:
    """What grading the code found: one check per grading world."""

    checks: list[dict[str, Any]]

    @property
    def passed(self) -> bool:
        return all(c["passed"] for c in self.checks)


async def replay_checks(final: dict[str, Any], task: TaskRow, grader: Grader, rows_of_rollout: list) -> Replay:
    """Run the rollout's cells over fresh grading worlds in a fresh sandbox; one check per world used.

    `rows_of_rollout`: the expected rows of the rollout's own database. A world counts only where its rows
    differ from them, so rows carried over from the rollout (typed in, recognised, looked up) fail there.
    """
    reference = task.grading.get("reference_cell")
    if not reference:
        raise ReplayFault(f"task {task.task_id} has no reference cell to compute a grading world's rows")
    sid = await grader.backend.acquire(grader.image, role="grader")
    try:
        await grader.backend.favour(sid)
        sb = Sandbox(grader.backend, sid)
        usable = await _usable_worlds(sb, task, reference, replayed=_tag(rows_of_rollout))
        checks = []
        started = False
        for i, (world, expected) in enumerate(usable[:WORLDS], 1):
            tagged, why = await _submission_result(sb, world, final, task, started)
            started = True
            outcome = compare(tagged, expected) if why is None else None
            detail = why or outcome.reason
            checks.append({"name": f"replay_world_{i}", "passed": outcome is not None and outcome.passed, "detail": detail})
        return Replay(checks)
    finally:
        grader.backend.delete_later(sid)


async def _usable_worlds(sb: Sandbox, task: TaskRow, reference: str, replayed: dict) -> list[tuple[World, list]]:
    """Grading worlds with the reference's rows on each, drawn until WORLDS are usable or CANDIDATES were tried:
    usable where the rows do not depend on storage order and differ from `replayed` (the rollout's rows)."""
    usable: list[tuple[World, list]] = []
    drawn = 0
    started = False
    while len(usable) < WORLDS and drawn < CANDIDATES:
        strength = 1 if drawn == 0 else STRONGER  # a second round draws more rows, often at the ends of each range
        worlds = draw_worlds(task, min(WORLDS - len(usable), CANDIDATES - drawn), strength)
        drawn += len(worlds)
        await _build(sb, worlds, image_db)
        if not started:
            await _start(sb, session_preamble(source=worlds[0].path), SESSION_ENV)
            started = True
        for world in worlds:
            rows = [await _reference_rows(sb, world, reference, SESSION_DB, flag) for flag in ("OFF", "ON")]
            if compare(_tag(rows[1]), rows[0]).passed and not compare(replayed, rows[0]).passed:
                usable.append((world, rows[0]))
    return usable


async def _build(sb: Sandbox, worlds: list[World], image_db) -> None:
    specs = [{"path": w.path, "base": w.base, "key": w.key, "source": image_db(w.base), "strength": w.strength} for w in worlds]
    await sb.exec(["mkdir", "-p", WORLD_DIR], timeout=30)
    stdin = json.dumps(specs).encode()
    result = await sb.exec([CONTAINER_PYTHON, "-c", BUILD_PROGRAM], stdin=stdin, timeout=BUILD_SECONDS)
    if result.exit_code != 0 or result.timed_out:
        raise ReplayFault(f"building the grading worlds failed: {(result.stderr or result.stdout)[-600:]}")


async def _start(sb: Sandbox, preamble: str, env: dict[str, str]) -> None:
    out = await sb.start_python(preamble=preamble, env=env)
    if out.strip():
        raise ReplayFault(f"the session over a grading world did not start: {out.strip()[-300:]}")


async def _reference_rows(sb: Sandbox, world: World, reference: str, session_db: str, flag: str) -> list:
    """The reference's rows on `world`, its unordered scans reversed when `flag` is ON (no submission code has run)."""
    switched = await sb.run_python(
        SWITCH_WORLD.format(world=world.path, session=session_db, flag=flag), timeout=SETUP_CELL_SECONDS
    )
    if switched.output.strip():
        raise ReplayFault(f"the reference's session could not move to a grading world: {switched.output.strip()[-300:]}")
    await sb.run_python(reference, timeout=SETUP_CELL_SECONDS)
    try:
        tagged = await sb.probe("result")
    except RuntimeError as exc:
        raise ReplayFault(f"the reference's rows on a grading world could not be read: {exc}") from exc
    decoded, why = decode_result(tagged)
    if decoded is None:
        raise ReplayFault(f"the reference gave no rows on a grading world: {why}")
    return [list(r) for r in decoded]


def _tag(rows: list[list]) -> dict[str, Any]:
    """Rows in the probe's tagged form (what compare() reads)."""
    return {"list": [{"tuple": list(r)} for r in rows]}


async def _submission_result(
    sb: Sandbox, world: World, final: dict[str, Any], task: TaskRow, after_submission: bool
) -> tuple[Any, str | None]:
    """The submission's `result` on `world`, or None and why it has none (the submission's doing)."""
    files = {**dict(task.files), **{p: t for p, t in (final.get("workspace") or {}).items()}}
    setup = task.files.get(task.grading["setup_cell"]) if task.grading.get("setup_cell") else None
    cells = [c for c in final.get("cells") or [] if isinstance(c, str)]
    try:
        return await _run_cells(sb, world.path, cells, files, setup), None
    except ReplayFault as exc:
        if not after_submission:
            raise
        return None, f"after the submission's cells ran in this sandbox, {exc}"
    except SandboxError as exc:  # the agent could not do the harness's part: whose doing, by the host's evidence
        own = None if isinstance(exc, SandboxStarved) or not after_submission else _pushed(sb)
        if own is None:
            raise
        return None, f"after the submission's cells ran in this sandbox, {exc}: {own}"


def _pushed(sb: Sandbox) -> str | None:
    """What the sandbox's own processes did against its limits lately (a pid bomb the cells left), or None.

    A fresh grading sandbox runs nothing of the submission's before its cells, so once they ran,
    processes that hold its pids or memory at their limit are theirs: the session that cannot
    start over the next world is the submission's 0.0, not a harness fault (blame.limits_hit).
    """
    return limits_hit(sb.backend.recent_usage(sb.id, LIMIT_WINDOW))


async def _run_cells(sb: Sandbox, db: str, cells: list[str], files: dict[str, str], setup: str | None) -> Any:
    """A new session over a copy of `db`, the files laid out, the setup cell, then `cells`; `result` tagged."""
    if files:
        await sb.write_files({f"/workspace/{path}": text for path, text in files.items()})
    await _start(sb, session_preamble(source=db), SESSION_ENV)
    if setup is not None:
        await sb.run_python(setup, timeout=SETUP_CELL_SECONDS)
    limit = DEFAULTS.timeout_per_command_seconds
    for cell in cells:  # graded code: its limit counts its own time, at any load (grading/grader.py)
        await sb.run_python(cell, timeout=limit, backstop=GRADING_BACKSTOP_FACTOR * limit)
    try:
        return await sb.probe("result")
    except RuntimeError as exc:  # the session could not encode `result`: as collect does, the submission's
        return {"unreadable": str(exc)[:300]}
