"""Other answers of a task: `alt_*` (correct by an unusual route) must score 1.0, and
`wrong_*` (one realistic mistake) must score below it.

A grader made sensitive by mutants and bigger fixtures may start failing right answers that
take another road. Each task may hold such answers, and `build_tasks.py --verify` plays
every one of them through the real path:

- orm: `alt_*.py` beside reference.py, one execute_code cell each (a Subquery instead of a
  join, ranks computed in Python, a sort done in Python);
- fastapi: `alt_*.py` apps, graded as /workspace/app.py (an APIRouter, a class-based
  dependency, a hand-built response);
- django: `alt_*/` folders holding deliverables that replace the reference's.

`wrong_*` answers of fastapi (`wrong_*.py` apps) and django (`wrong_*/` folders) are played
here too and must score below 1.0 (a wrong answer with some checks passing keeps its partial
credit, as the family's reward says). The orm family plays its own `wrong_*.py` (score 0.0).
On a fastapi task whose checks draw values ([[vary]]), each answer is graded VARY_DRAWS
times, each with its own draw: an alt_* must score 1.0 on every one, a wrong_* below 1.0 on
every one (the lowest and the highest score are what is judged).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ALT_TIMEOUT = 60
VARY_DRAWS = 3  # gradings per answer of a fastapi task with [[vary]]


def alt_names(family: str, folder: Path) -> list[str]:
    """The names of the task folder's alt answers (none for a folder that does not exist, e.g. a generated task's)."""
    if family in ("orm", "fastapi"):
        return sorted(p.stem for p in folder.glob("alt_*.py"))
    if family == "django":
        return sorted(p.name for p in folder.glob("alt_*") if p.is_dir())
    return []


def answers(family: str, folder: Path, kind: str = "alt") -> dict[str, Any]:
    """The task's alt (or wrong) answers by name: source text (orm, fastapi) or {path: text} (django)."""
    if family in ("orm", "fastapi"):
        return {p.stem: p.read_text() for p in sorted(folder.glob(f"{kind}_*.py"))}
    if family == "django":
        out = {}
        for d in sorted(p for p in folder.glob(f"{kind}_*") if p.is_dir()):
            out[d.name] = {p.relative_to(d).as_posix(): p.read_text() for p in sorted(d.rglob("*.py"))}
        return out
    return {}


async def answer_controls(folder: Path, task: Any, ctx: Any) -> list[Any]:
    """One Control per answer: alt_* ok at exactly 1.0, wrong_* (fastapi, django) ok below 1.0."""
    import asyncio

    from sandbox_env.families import grade_final
    from sandbox_env.grading.grader import Grader
    from sandbox_env.verify.base import Control
    from sandbox_env.verify.scripted import scripted_rollout

    alts = answers(task.family, folder)
    wrongs = answers(task.family, folder, "wrong") if task.family != "orm" else {}
    alts.update(wrongs)
    if not alts:
        return []

    async def one(source: Any) -> Any:
        if task.family == "orm":
            calls = [{"tool": "execute_code", "args": {"code": source}}]
            return (await scripted_rollout(ctx.backend, ctx.image, task, calls, timeout=ALT_TIMEOUT)).grade
        grader = Grader(ctx.backend, ctx.image)
        if task.family == "fastapi":
            if not task.grading.get("vary"):
                return await grade_final(task, {"files": {"app.py": source}}, grader)
            runs = [await grade_final(task, {"files": {"app.py": source}}, grader) for _ in range(VARY_DRAWS)]
            bad = [g for g in runs if g.scoring_error or g.tampered]
            if bad:
                return bad[0]
            # the run that judges the answer: a wrong_* at its highest, an alt_* at its lowest
            return max(runs, key=lambda g: g.score) if source in wrongs.values() else min(runs, key=lambda g: g.score)
        from sandbox_env.verify.django import VERIFIER

        return await grade_final(task, {"files": {**VERIFIER.solution_files(folder), **source}}, grader)

    grades = await asyncio.gather(*(one(s) for s in alts.values()))
    controls = []
    for name, g in zip(alts, grades, strict=True):
        failing = [f"{c['name']}: {c['detail']}" for c in g.checks if not c["passed"]][:2]
        detail = g.reason + (" | " + " | ".join(failing) if failing and g.score < 1.0 else "")
        right = g.score == 1.0 if name.startswith("alt_") else g.score < 1.0
        controls.append(Control(name, g.score, right and not g.scoring_error and not g.tampered, detail))
    return controls
