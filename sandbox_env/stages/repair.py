"""Make and verify repair tasks in the real image, and store them (generate/repair_store.py).

    python -m sandbox_env.stages.repair [--family F] [--limit N] [--generated N] [--concurrency C]

For every reference (hand-written tasks of the three families, and --generated N generated
orm tasks), the candidates are its `wrong_*` answers and `naive/` deliverable and the
mutants of verify/mutants.py (declared equivalents left out), taken in an order drawn from
a hash of their names; then pairs merged from two verified singles (repair_logic.merge).

Verified by execution, like every task:
- orm: one container per fixture variant runs every candidate's cell (stages/generate_orm.py's
  batch runner); each answer is graded by the orm family's own `grade` on that variant's rows.
  The reference must score 1.0 and the broken cell below 1.0 on every variant the task admits
  (a rollout may be given any of them), and a pair must differ from each of its singles on
  some variant (repair_logic.orm_combination_visible).
- fastapi, django: every candidate through the family's real grader (grade_final, one fresh
  grading container each). The reference must score 1.0 there; a candidate below 1.0 with no
  scoring error and no tamper flag is broken; a fastapi task that draws its values grades the
  candidate once more with another draw, and it must lose again. A pair must lose, and each
  of its singles' failing checks or tests must meet the pair's (repair_logic.combination_visible).
Then dedup and at most CAP_PER_REFERENCE per reference (repair_logic.select).

`build_tasks.py --verify` grades every stored repair again (reverify_controls): the base's
reference 1.0, the broken files below 1.0, and the base task's alt_* answers (correct answers
written another way, named in the row's measures["alts"]) 1.0 under the repair row, each alt
its own control `alt_<name>`.

Resumable: lines already in the store are kept; a reference that has its cap is skipped; the
store is written after every reference (fastapi, django) or every batch (orm).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import time
from pathlib import Path
from typing import Any

from sandbox_env.families.base import TaskRow
from sandbox_env.generate import repair_logic as logic
from sandbox_env.generate import repair_store

N_SINGLES = 5  # singles verified per reference
N_PAIRS = 3  # pairs tried per reference


def _declared(folder: Path) -> set[str]:
    from sandbox_env.verify.sensitivity import declared_equivalents

    return set(declared_equivalents(folder))


def _single(name: str, operator: str, files: dict[str, str]) -> dict[str, Any]:
    return {
        "parts": [name],
        "operators": [operator],
        "kind": operator if operator in ("wrong", "naive") else "mutant",
        "files": {p: logic.normalise(s) for p, s in files.items()},
    }


def _ordered(base_id: str, singles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Kept answers first (at most one), then mutants, each group in the hash order of their names."""
    kept = sorted((s for s in singles if s["kind"] != "mutant"), key=lambda s: logic.order_key(base_id, s["parts"][0]))
    muts = sorted((s for s in singles if s["kind"] == "mutant"), key=lambda s: logic.order_key(base_id, s["parts"][0]))
    return kept[:1] + muts + kept[1:]


def bases(family: str, generated: int = 0) -> list[dict[str, Any]]:
    """Every reference of `family`: its compiled row, reference files and single candidates, in order."""
    from sandbox_env.families import get_family
    from sandbox_env.verify.base import task_folders
    from sandbox_env.verify.sensitivity import mutants_of

    fam = get_family(family)
    out = []
    for folder in task_folders(family):
        row = fam.compile_task(folder)
        skip = _declared(folder)
        if family == "orm":
            ref = {repair_store.ORM_CELL: (folder / "reference.py").read_text()}
            singles = [
                _single(m.name, m.operator, {repair_store.ORM_CELL: m.source})
                for m in mutants_of("orm", folder, row)
                if m.name not in skip
            ]
            singles += [
                _single(p.stem, "wrong", {repair_store.ORM_CELL: p.read_text()}) for p in sorted(folder.glob("wrong_*.py"))
            ]
        elif family == "fastapi":
            ref = {"app.py": (folder / "reference.py").read_text()}
            singles = [
                _single(m.name, m.operator, {"app.py": m.source})
                for m in mutants_of("fastapi", folder, row)
                if m.name not in skip
            ]
            singles += [_single(p.stem, "wrong", {"app.py": p.read_text()}) for p in sorted(folder.glob("wrong_*.py"))]
        else:
            from sandbox_env.verify.django import VERIFIER

            ref = {p: VERIFIER.solution_files(folder)[p] for p in row.collect}
            singles = []
            for m in mutants_of("django", folder, row):
                if m.name in skip:
                    continue
                path = m.name.split(":", 1)[0]
                singles.append(_single(m.name, m.operator, {**ref, path: m.source}))
            for d in sorted(p for p in folder.iterdir() if p.is_dir() and (p.name.startswith("wrong_") or p.name == "naive")):
                given = VERIFIER.solution_files(folder, d.name)
                singles.append(
                    _single(
                        d.name, "naive" if d.name == "naive" else "wrong", {**ref, **{k: v for k, v in given.items() if k in ref}}
                    )
                )
        out.append({"row": row, "ref": ref, "singles": _ordered(row.task_id, singles)})
    if family == "orm" and generated:
        from sandbox_env.generate.store import read
        from sandbox_env.stages.generate_orm import mutants_of as gen_mutants

        records = sorted(read(), key=lambda r: logic.order_key("generated", r["task_id"]))[:generated]
        for r in records:
            row = fam.compile_generated(r)
            ref = {repair_store.ORM_CELL: r["reference"]}
            singles = [
                _single(name, name.split("@", 1)[0], {repair_store.ORM_CELL: src})
                for name, src in gen_mutants(r["reference"]).items()
            ]
            out.append({"row": row, "ref": ref, "singles": _ordered(row.task_id, singles)})
    return out


def pairs_of(base: dict[str, Any], killed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Up to N_PAIRS pairs of verified singles (other operators first) whose edits merge."""
    out = []
    options = [(a, b) for i, a in enumerate(killed) for b in killed[i + 1 :] if a["kind"] == b["kind"] == "mutant"]
    options.sort(
        key=lambda ab: (
            ab[0]["operators"] == ab[1]["operators"],
            logic.order_key(base["row"].task_id, ab[0]["parts"][0] + ab[1]["parts"][0]),
        )
    )
    for a, b in options:
        files = {}
        for path, ref in base["ref"].items():
            sa, sb = a["files"][path], b["files"][path]
            na, nb, nr = sa != logic.normalise(ref), sb != logic.normalise(ref), logic.normalise(ref)
            if na and nb:
                merged = logic.merge(ref, sa, sb)
                if merged is None:
                    break
                files[path] = merged
            else:
                files[path] = sa if na else sb if nb else nr
        else:
            out.append(
                {
                    "parts": a["parts"] + b["parts"],
                    "operators": a["operators"] + b["operators"],
                    "kind": "pair",
                    "files": files,
                    "singles": [a, b],
                }
            )
            if len(out) >= N_PAIRS:
                break
    return out


def record(base: dict[str, Any], cand: dict[str, Any], report: str, failing: int, total: int) -> dict[str, Any]:
    row: TaskRow = base["row"]
    n_sites = sum(logic.sites(base["ref"][p], s) for p, s in cand["files"].items())
    m = logic.measures(cand["operators"], max(n_sites, len(cand["operators"])), failing, total, row.difficulty)
    return {
        "task_id": logic.repair_id(row.task_id, cand["files"]),
        "base_task": row.task_id,
        "family": row.family,
        "kind": cand["kind"],
        "parts": cand["parts"],
        "files": cand["files"],
        "report": report,
        "split": row.split,
        "difficulty": logic.difficulty(m),
        "measures": m,
    }


# -- orm ----------------------------------------------------------------------------------------


def _tagged(rows: Any) -> dict[str, Any]:
    if isinstance(rows, dict):
        return {"missing": True}
    return {"list": [{"tuple": list(r)} for r in rows]}


async def _orm_rows(
    backend: Any, image: str, cells: dict[str, tuple[str, list[int]]], concurrency: int
) -> dict[str, dict[int, Any]]:
    """{key: {variant: rows | {"error"}}}: every cell on each of its variants, one container per variant."""
    from sandbox_env.stages.generate_orm import run_cells

    variants = sorted({v for _, vs in cells.values() for v in vs})
    sem = asyncio.Semaphore(concurrency)
    out: dict[str, dict[int, Any]] = {k: {} for k in cells}

    async def one(v: int) -> None:
        part = {k: code for k, (code, vs) in cells.items() if v in vs}
        async with sem:
            got = await run_cells(backend, image, v, False, part)
        for k in part:
            out[k][v] = got.get(k, {"error": "no answer came back"})

    await asyncio.gather(*(one(v) for v in variants))
    return out


async def _orm_scores(row: TaskRow, rows_by_variant: dict[int, Any]) -> dict[int, float]:
    from sandbox_env.families.orm import FAMILY

    scores = {}
    for v, rows in rows_by_variant.items():
        g = await FAMILY.grade({"result": _tagged(rows), "fixture_variant": v}, row, None)
        scores[v] = g.score
    return scores


async def run_orm(
    backend: Any, image: str, todo: list[dict[str, Any]], taken: dict[str, set[str]], concurrency: int, log=print
) -> list[dict[str, Any]]:
    variants_of = {b["row"].task_id: sorted(int(k) for k in b["row"].grading["fixture_variants"]) for b in todo}
    cells: dict[str, tuple[str, list[int]]] = {}
    for bi, b in enumerate(todo):
        vs = variants_of[b["row"].task_id]
        cells[f"{bi}|ref"] = (b["ref"][repair_store.ORM_CELL], vs)
        for si, s in enumerate(b["singles"][: 2 * N_SINGLES]):
            cells[f"{bi}|s{si}"] = (s["files"][repair_store.ORM_CELL], vs)
    t0 = time.perf_counter()
    got = await _orm_rows(backend, image, cells, concurrency)
    log(f"  orm: {len(cells)} cells (references and singles) run in {time.perf_counter() - t0:.0f} s")
    pair_cells: dict[str, tuple[str, list[int]]] = {}
    state = []
    for bi, b in enumerate(todo):
        row = b["row"]
        ref_scores = await _orm_scores(row, got[f"{bi}|ref"])
        if any(s != 1.0 for s in ref_scores.values()):
            log(f"  {row.task_id}: the reference does not score 1.0 on every variant ({ref_scores}): skipped")
            state.append(None)
            continue
        killed = []
        for si, s in enumerate(b["singles"][: 2 * N_SINGLES]):
            scores = await _orm_scores(row, got[f"{bi}|s{si}"])
            if all(x < 1.0 for x in scores.values()):
                killed.append({**s, "rows": got[f"{bi}|s{si}"]})
            if len(killed) >= N_SINGLES:
                break
        pairs = pairs_of(b, killed)
        for pi, p in enumerate(pairs):
            pair_cells[f"{bi}|p{pi}"] = (p["files"][repair_store.ORM_CELL], variants_of[row.task_id])
        state.append((killed, pairs))
    t0 = time.perf_counter()
    pgot = await _orm_rows(backend, image, pair_cells, concurrency) if pair_cells else {}
    log(f"  orm: {len(pair_cells)} pair cells run in {time.perf_counter() - t0:.0f} s")
    out = []
    for bi, (b, st) in enumerate(zip(todo, state, strict=True)):
        if st is None:
            continue
        row = b["row"]
        expected = {int(k): v for k, v in row.grading["fixture_variants"].items()}
        killed, pairs = st
        ok_pairs = []
        for pi, p in enumerate(pairs):
            rows = pgot[f"{bi}|p{pi}"]
            scores = await _orm_scores(row, rows)
            if all(x < 1.0 for x in scores.values()) and logic.orm_combination_visible(
                [s["rows"] for s in p["singles"]], rows, expected
            ):
                ok_pairs.append({**p, "rows": rows})
        chosen = logic.select(
            killed + ok_pairs, logic.CAP_PER_REFERENCE - len(taken.get(row.task_id, ())), taken.get(row.task_id)
        )
        v = min(expected)
        for c in chosen:
            exp, have = expected[v], c["rows"][v]
            report = logic.orm_report(exp, have)
            if isinstance(have, dict):
                failing, total = 1, 1
            else:
                total = max(len(exp), len(have), 1)
                failing = sum(
                    1 for i in range(total) if i >= len(exp) or i >= len(have) or not logic.rows_pass([exp[i]], [have[i]])
                )
            out.append(record(b, c, report, failing, total))
    return out


# -- fastapi and django -------------------------------------------------------------------------


async def _grade(row: TaskRow, files: dict[str, str], grader: Any, sem: asyncio.Semaphore) -> Any:
    from sandbox_env.families import grade_final

    async with sem:
        return await grade_final(row, {"files": dict(files)}, grader)


def _broken(g: Any) -> bool:
    return g.score < 1.0 and not g.scoring_error and not g.tampered


def _failing(g: Any) -> set[str]:
    return {c["name"] for c in g.checks if not c["passed"]}


async def run_graded(
    base: dict[str, Any], grader: Any, sem: asyncio.Semaphore, taken: set[str], log=print
) -> list[dict[str, Any]]:
    """One fastapi or django reference: reference 1.0, singles, pairs, selection; the records."""
    row: TaskRow = base["row"]
    t0 = time.perf_counter()
    ref = await _grade(row, base["ref"], grader, sem)
    if ref.score != 1.0:
        log(f"  {row.task_id}: the reference scores {ref.score} ({ref.scoring_error or ref.reason}): skipped")
        return []
    varied = bool(row.grading.get("vary"))
    singles = base["singles"][:N_SINGLES]
    grades = await asyncio.gather(*(_grade(row, s["files"], grader, sem) for s in singles))
    killed = [{**s, "grade": g} for s, g in zip(singles, grades, strict=True) if _broken(g)]
    pairs = pairs_of(base, killed)
    pgrades = await asyncio.gather(*(_grade(row, p["files"], grader, sem) for p in pairs))
    ok_pairs = [
        {**p, "grade": g}
        for p, g in zip(pairs, pgrades, strict=True)
        if _broken(g) and logic.combination_visible([_failing(s["grade"]) for s in p["singles"]], _failing(g))
    ]
    chosen = logic.select(killed + ok_pairs, logic.CAP_PER_REFERENCE - len(taken), taken)
    if varied:  # another draw: the broken code must lose again
        again = await asyncio.gather(*(_grade(row, c["files"], grader, sem) for c in chosen))
        chosen = [c for c, g in zip(chosen, again, strict=True) if _broken(g)]
    out = []
    for c in chosen:
        g = c["grade"]
        if row.family == "fastapi":
            report = logic.fastapi_report(
                row.grading["checks"], g.checks, [str(v["token"]) for v in row.grading.get("vary") or []]
            )
            failing, total = len(_failing(g)), len(g.checks)
        else:
            report = logic.django_report(g.checks)
            failing, total = len(_failing(g)), max(len(g.checks), 1)
        out.append(record(base, c, report, failing, total))
    log(
        f"  {row.task_id}: {len(killed)}/{len(singles)} singles and {len(ok_pairs)}/{len(pairs)} pairs verified, "
        f"{len(out)} kept ({time.perf_counter() - t0:.0f} s)"
    )
    return out


# -- verifying the stored tasks again (build_tasks.py --verify) ----------------------------------

Answers = dict[str, dict[str, dict[str, str]]]  # {repair task id: {alt name: {path: text}}}


def alt_answers(row: TaskRow) -> dict[str, dict[str, str]]:
    """The repair row's correct answers written another way: its base task's alt_* answers, by name.

    Each is the files the model would leave: orm {query.py: the cell, whose `result` is graded},
    fastapi {app.py: the app}, django every collected deliverable (the reference's, replaced by
    the alt folder's). A base with no folder (a generated orm task) has none.
    """
    from sandbox_env.verify.answers import answers
    from sandbox_env.verify.base import task_folder

    folder = task_folder(row.family, row.base_task)
    found = answers(row.family, folder)
    if row.family == "orm":
        return {name: {repair_store.ORM_CELL: code} for name, code in found.items()}
    if row.family == "fastapi":
        return {name: {"app.py": code} for name, code in found.items()}
    reference = _reference_files(row)
    return {name: {p: files.get(p, reference[p]) for p in row.collect} for name, files in found.items()}


async def _orm_alt_control(row: TaskRow, name: str, rows_by_variant: dict[int, Any]) -> Any:
    """An orm alt answer's control: 1.0 on every fixture variant the repair row admits."""
    from sandbox_env.verify.base import Control

    scores = await _orm_scores(row, rows_by_variant)
    bad = []
    for v, s in scores.items():
        if s != 1.0:
            got = rows_by_variant[v]
            bad.append(
                f"{name} scores {s} on variant {v}" + (f" ({str(got.get('error'))[:160]})" if isinstance(got, dict) else "")
            )
    detail = "; ".join(bad) or f"1.0 on {len(scores)} fixture variants"
    return Control(name, min(scores.values(), default=0.0), bool(scores) and not bad, detail)


def _grade_detail(name: str, g: Any) -> str:
    failing = [f"{c['name']}: {c['detail']}" for c in g.checks if not c["passed"]][:2]
    return f"{name} scores {g.score} ({g.scoring_error or g.reason})" + (" | " + " | ".join(failing) if failing else "")


async def reverify_controls(
    backend: Any, image: str, rows: list[TaskRow], concurrency: int = 2, alts: Answers | None = None
) -> dict[str, list[Any]]:
    """Every repair row graded again, as controls by id, each of which must come out as stated.

    `reference`: the base task's reference 1.0 (graded once per base; orm on every admitted
    fixture variant); `broken`: the stored broken files below 1.0 with no scoring error or tamper
    flag; `alt_<name>`: each correct answer written another way (`alts`, by default the base
    task's alt_* answers, `alt_answers`) graded under the repair row exactly as the reference:
    orm on every variant the row admits, fastapi and django through grade_final with the row's
    own draw of values; 1.0 with no scoring error or tamper flag.
    """
    from sandbox_env.grading.grader import Grader
    from sandbox_env.verify import reference_calls
    from sandbox_env.verify.base import Control

    answers: Answers = {r.task_id: alt_answers(r) for r in rows} if alts is None else alts
    controls: dict[str, list[Any]] = {r.task_id: [] for r in rows}
    orm = [r for r in rows if r.family == "orm"]
    if orm:
        cells: dict[str, tuple[str, list[int]]] = {}
        alt_keys: dict[tuple[str, str], str] = {}
        for r in orm:
            vs = sorted(int(k) for k in r.grading["fixture_variants"])
            cells[f"{r.task_id}|broken"] = (r.files[repair_store.ORM_CELL], vs)
            cells[f"{r.base_task}|ref"] = (reference_calls("orm", r.base_task)[0]["args"]["code"], vs)
            for name, files in answers.get(r.task_id, {}).items():
                code = files[repair_store.ORM_CELL]
                key = f"{r.base_task}|{name}|{hashlib.sha256(code.encode()).hexdigest()[:12]}"
                alt_keys[r.task_id, name] = key
                cells[key] = (code, vs)
        got = await _orm_rows(backend, image, cells, concurrency)
        for r in orm:
            ref = await _orm_scores(r, got[f"{r.base_task}|ref"])
            bad = [f"the reference scores {s} on variant {v}" for v, s in ref.items() if s != 1.0]
            controls[r.task_id].append(
                Control("reference", min(ref.values(), default=0.0), bool(ref) and not bad, "; ".join(bad))
            )
            broken = await _orm_scores(r, got[f"{r.task_id}|broken"])
            bad = [f"the broken cell scores {s} on variant {v}" for v, s in broken.items() if s >= 1.0]
            controls[r.task_id].append(
                Control("broken", max(broken.values(), default=1.0), bool(broken) and not bad, "; ".join(bad))
            )
            for name in answers.get(r.task_id, {}):
                controls[r.task_id].append(await _orm_alt_control(r, name, got[alt_keys[r.task_id, name]]))
    graded = [r for r in rows if r.family in ("fastapi", "django")]
    if graded:
        grader = Grader(backend, image)
        sem = asyncio.Semaphore(concurrency)
        refs: dict[str, Any] = {}

        async def alt(r: TaskRow, name: str, files: dict[str, str]) -> Any:
            g = await _grade(r, files, grader, sem)
            ok = g.score == 1.0 and not g.scoring_error and not g.tampered
            return Control(name, g.score, ok, "" if ok else _grade_detail(name, g))

        async def one(r: TaskRow) -> None:
            if r.base_task not in refs:
                refs[r.base_task] = asyncio.ensure_future(_grade(r, _reference_files(r), grader, sem))
            mine = answers.get(r.task_id, {})
            broken, *alt_controls = await asyncio.gather(
                _grade(r, {p: r.files[p] for p in r.collect}, grader, sem), *(alt(r, n, f) for n, f in mine.items())
            )
            ref = await refs[r.base_task]
            ok = ref.score == 1.0 and not ref.scoring_error and not ref.tampered
            detail = "" if ok else f"the reference scores {ref.score} ({ref.scoring_error or ref.reason})"
            controls[r.task_id].append(Control("reference", ref.score, ok, detail))
            ok = _broken(broken)
            detail = "" if ok else f"the broken files score {broken.score} ({broken.scoring_error or broken.reason})"
            controls[r.task_id].append(Control("broken", broken.score, ok, detail))
            controls[r.task_id] += alt_controls

        await asyncio.gather(*(one(r) for r in graded))
    return controls


async def reverify(
    backend: Any, image: str, rows: list[TaskRow], concurrency: int = 2, alts: Answers | None = None
) -> dict[str, list[str]]:
    """reverify_controls as problems by id: what each failing control found (empty when every one holds)."""
    controls = await reverify_controls(backend, image, rows, concurrency, alts)
    return {task_id: [c.detail for c in cs if not c.ok] for task_id, cs in controls.items()}


def _reference_files(row: TaskRow) -> dict[str, str]:
    from sandbox_env.verify.base import task_folder

    folder = task_folder(row.family, row.base_task)
    if row.family == "fastapi":
        return {"app.py": (folder / "reference.py").read_text()}
    from sandbox_env.verify.django import VERIFIER

    return {p: VERIFIER.solution_files(folder)[p] for p in row.collect}


def control_lines(controls: dict[str, list[Any]], family_of: dict[str, str]) -> list[str]:
    """A line per failing task (its failing controls), then per family the alt answers graded and those below 1.0."""
    lines = []
    for task_id, cs in sorted(controls.items()):
        bad = [f"{c.name}={c.score:.2f}: {c.detail}" for c in cs if not c.ok]
        if bad:
            lines.append(f"  {task_id} FAIL: {'; '.join(bad)[:400]}")
    for family in sorted(set(family_of.values())):
        mine = [cs for task_id, cs in controls.items() if family_of[task_id] == family]
        alts = [c for cs in mine for c in cs if c.name.startswith("alt_")]
        with_alts = sum(any(c.name.startswith("alt_") for c in cs) for cs in mine)
        lines.append(
            f"repair alt answers, {family}: {len(alts)} graded under {with_alts} of {len(mine)} repair tasks, "
            f"{sum(not c.ok for c in alts)} below 1.0 or faulted"
        )
    return lines


def main_reverify(rows: list[TaskRow], concurrency: int = 2) -> int:
    """build_tasks.py --verify for repair tasks: the chosen ones verified again; prints counts and time."""
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    backend = make_backend()
    t0 = time.perf_counter()
    try:
        controls = asyncio.run(reverify_controls(backend, ensure_image(), rows, concurrency))
    finally:
        backend.teardown()
    failing = [k for k, cs in controls.items() if not all(c.ok for c in cs)]
    for line in control_lines(controls, {r.task_id: r.family for r in rows}):
        print(line)
    print(f"repair tasks: {len(rows) - len(failing)}/{len(rows)} verified again ({time.perf_counter() - t0:.0f} s)")
    return 1 if failing else 0


# -- the command --------------------------------------------------------------------------------


def _key(r: dict[str, Any]) -> str:
    import json

    return json.dumps(r["files"], sort_keys=True)


async def generate(
    families: list[str], limit: int | None, generated: int, concurrency: int, path: Path, log=print
) -> dict[str, int]:
    from sandbox_env.grading.grader import Grader
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    records = {r["task_id"]: r for r in repair_store.read(path)}
    image = await asyncio.to_thread(ensure_image)
    backend = make_backend()
    made: dict[str, int] = {}
    try:
        for family in families:
            todo = []
            for b in bases(family, generated if family == "orm" else 0):
                have = [r for r in records.values() if r["base_task"] == b["row"].task_id]
                if len(have) < logic.CAP_PER_REFERENCE:
                    b["taken"] = {_key(r) for r in have}
                    todo.append(b)
            todo = todo[:limit] if limit else todo
            log(f"{family}: {len(todo)} references to repair")
            new: list[dict[str, Any]] = []
            if family == "orm" and todo:
                new = await run_orm(backend, image, todo, {b["row"].task_id: b["taken"] for b in todo}, concurrency, log)
                records.update({r["task_id"]: r for r in new})
                repair_store.write(path, list(records.values()))
            elif todo:
                grader = Grader(backend, image)
                sem = asyncio.Semaphore(concurrency)
                for b in todo:
                    got = await run_graded(b, grader, sem, b["taken"], log)
                    new += got
                    records.update({r["task_id"]: r for r in got})
                    repair_store.write(path, list(records.values()))
            made[family] = len(new)
    finally:
        backend.teardown()
    return made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sandbox_env.stages.repair", description=__doc__.splitlines()[0])
    ap.add_argument("--family", action="append", choices=("orm", "fastapi", "django"), help="only this family (repeatable)")
    ap.add_argument("--limit", type=int, help="at most this many references per family in this run")
    ap.add_argument("--generated", type=int, default=0, help="also repair this many generated orm tasks")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--out", type=Path, default=repair_store.REPAIR_FILE)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    made = asyncio.run(
        generate(args.family or ["orm", "fastapi", "django"], args.limit, args.generated, args.concurrency, args.out)
    )
    stored = repair_store.read(args.out)
    per = {f: sum(r["family"] == f for r in stored) for f in ("orm", "fastapi", "django")}
    print(
        f"new repair tasks: {', '.join(f'{f} {n}' for f, n in made.items())}; stored: {len(stored)} "
        f"({', '.join(f'{f} {n}' for f, n in per.items())}) in {args.out}; {time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
