"""Generated tasks as compact JSON lines: one verified task a line, and what compiles them.

Decision: verification takes containers (minutes), so `websandbox generate` verifies once and
writes sandbox_env/data/generated_orm.jsonl, which is committed; `build_tasks.py` only reads it
and compiles its lines into the dataset, next to the hand-written tasks, with no container.
A line holds the tree (canonical form: re-rendering it gives the same reference and spec),
the reference cell, the spec's lines, the expected rows per admitted fixture variant, the
structural measures, the difficulty, the split and where it came from (seed and draw index).

Task ids are `orm_gen_<tree hash>`: the same tree gets the same id in every build.
The split is a function of the structural signature (one signature in five goes to `eval`), so
`eval` holds out whole structures; eval tasks are verified on the fixture variants of
EVAL_VARIANTS only and train tasks never on them, so no eval task's rows come from a train
fixture. Tasks drawn over the seeded worlds (`websandbox generate --fixtures seeded`) are
verified on fixture seeds: eval tasks on EVAL_SEEDS only, train tasks on the other seeds, so
the held-out seeds' rows never appear in train. Such a line records `draw_fixture` (the seed
whose rows gave the constants), so `candidate(seed, index, shape, draw_fixture)` redraws it.

Re-rendering (`python -m sandbox_env.generate.store --rerender`): the spec is English over the
tree, and verification never reads it, so a change of render_spec.py re-renders every stored
line from its stored tree without a container: title, spec, columns, order, the traps stated,
and the measures and difficulty that count them (the killed mutants are kept from the line).
The reference, the rows, the task id and the split are untouched. A line whose tree the sampler
no longer draws (sample.returns_to_origin) is dropped, which needs no verification either.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from sandbox_env.constants import PACKAGE_DIR
from sandbox_env.generate.task_lines import read_lines, write_lines
from sandbox_env.generate.tree import Query, canonical

GENERATED_FILE = PACKAGE_DIR / "data" / "generated_orm.jsonl"
DEFAULT_SEED = 22
DEFAULT_COUNT = 2600  # pre-screened candidates drawn by `websandbox generate` with no --target
EVAL_VARIANTS = (6, 7)
# seeded worlds (runtime/container/orm_fixture/world.py): a task drawn over them is verified on the train seeds
# or, if its signature is held out, on EVAL_SEEDS only; DRAW_SEED's rows give the sampler its constants
EVAL_SEEDS = (105, 106)
DRAW_SEED = 101
EVAL_SHARE = 5  # one signature in EVAL_SHARE is held out for `eval`
SPLITS = ("train", "eval")


def split_of(signature: str) -> str:
    digest = hashlib.sha256(f"websandbox-split:{signature}".encode()).digest()
    return "eval" if digest[0] % EVAL_SHARE == 0 else "train"


def fixture_pool(split: str, seeded: bool) -> tuple[int, ...]:
    """The fixtures a task of `split` is verified on: variants of the hand-written fixture, or fixture seeds."""
    from sandbox_env.runtime.container.orm_fixture.variants import VARIANTS
    from sandbox_env.runtime.container.orm_fixture.world import SEEDED

    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    held, every = (EVAL_SEEDS, SEEDED) if seeded else (EVAL_VARIANTS, tuple(range(VARIANTS)))
    return held if split == "eval" else tuple(v for v in every if v not in held)


def task_id(tree_hash: str) -> str:
    return f"orm_gen_{tree_hash[:12]}"


def record(seed: int, index: int, q: Query, code: str, spec: dict[str, Any], variants: dict[int, Any],
           measures: dict[str, int], difficulty: str, category: str, split: str,
           shape: str | None = None, draw_fixture: int | None = None) -> dict[str, Any]:  # fmt: skip
    from sandbox_env.generate.tree import signature, tree_hash

    h = tree_hash(q)
    drawn = {} if shape is None else {"shape": shape}  # a batch of one shape: candidate(seed, index, shape)
    if draw_fixture is not None:  # drawn over a seeded world: candidate(seed, index, shape, draw_fixture)
        drawn["draw_fixture"] = draw_fixture
    return {
        **drawn,
        "task_id": task_id(h),
        "tree_hash": h,
        "signature": signature(q),
        "split": split,
        "seed": seed,
        "index": index,
        "difficulty": difficulty,
        "category": category,
        "universe": q.universe,
        "title": spec["title"],
        "spec": spec["spec"],
        "columns": spec["columns"],
        "order": spec["order"],
        "traps": spec["traps"],
        "measures": measures,
        "reference": code,
        "variants": {str(k): v for k, v in sorted(variants.items())},
        "tree": canonical(q),
    }


def write(path: Path, records: list[dict[str, Any]]) -> None:
    write_lines(path, records)


def merge(old: list[dict[str, Any]], new: list[dict[str, Any]], per_signature: int) -> list[dict[str, Any]]:
    """`old` plus the records of `new` that add a task: no id or expected rows already kept, and at most
    `per_signature` tasks per structure over both."""
    kept = list(old)
    ids = {r["task_id"] for r in old}
    prints = {rows_fingerprint(r) for r in old}
    per_sig: dict[str, int] = {}
    for r in old:
        per_sig[r["signature"]] = per_sig.get(r["signature"], 0) + 1
    for r in new:
        if r["task_id"] in ids or rows_fingerprint(r) in prints or per_sig.get(r["signature"], 0) >= per_signature:
            continue
        kept.append(r)
        ids.add(r["task_id"])
        prints.add(rows_fingerprint(r))
        per_sig[r["signature"]] = per_sig.get(r["signature"], 0) + 1
    return kept


def rows_fingerprint(r: dict[str, Any]) -> str:
    """The expected rows of a record over its variants, hashed (the same rows on the same variants: the same task)."""
    return hashlib.sha256(json.dumps(r["variants"], sort_keys=True).encode()).hexdigest()[:16]


def read(path: Path = GENERATED_FILE) -> list[dict[str, Any]]:
    return read_lines(path)


def rerender(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The records with their English rendered again from their trees, and the ids of those dropped."""
    from sandbox_env.generate.measure import difficulty, measures
    from sandbox_env.generate.render_spec import render_spec
    from sandbox_env.generate.sample import returns_to_origin
    from sandbox_env.generate.tree import from_canonical

    kept, dropped = [], []
    for r in records:
        q = from_canonical(r["tree"])
        if returns_to_origin(q):
            dropped.append(r["task_id"])
            continue
        spec = render_spec(q)
        m = measures(q, spec["traps"], killed=r["measures"]["killed_mutants"])
        kept.append({**r, **{k: spec[k] for k in ("title", "spec", "columns", "order", "traps")},
                     "measures": m, "difficulty": difficulty(m)})  # fmt: skip
    return kept, dropped


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m sandbox_env.generate.store", description=__doc__.splitlines()[0])
    ap.add_argument("--rerender", action="store_true", help="re-render every stored task's English from its tree")
    ap.add_argument("--file", type=Path, default=GENERATED_FILE)
    args = ap.parse_args(argv)
    if not args.rerender:
        ap.error("nothing to do: pass --rerender")
    records = read(args.file)
    kept, dropped = rerender(records)
    write(args.file, kept)
    before = {r["task_id"]: r for r in records}
    changed = sum(1 for r in kept if r != before[r["task_id"]])
    print(f"{args.file}: {len(kept)} tasks re-rendered ({changed} changed), {len(dropped)} dropped: {', '.join(dropped)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
