"""Generated fastapi tasks: a candidate record from (seed, index), the JSON lines store, and the row.

`candidate_record(seed, index, grammar)` draws a tree (api_tree.candidate) and renders the three
things from it: the spec and its coverage (api_spec.py), the reference (api_reference.py), the
checks and their drawn tokens (api_checks.py, answered by its oracle); the tokens come from their
own stream, so the same (seed, index, grammar) gives the same record byte for byte. A record drawn
under grammar 2 or later carries `grammar`; a line without it was drawn under grammar 1
(`grammar_of`), so every stored line redraws under the grammar it was drawn with.

`python -m sandbox_env.stages.generate_fastapi` verifies candidates in the image and writes the
admitted ones to sandbox_env/data/generated_fastapi.jsonl (committed); `build_tasks.py` reads
it with no container. A line is self-contained (tree, spec, reference, checks, vary, coverage,
split, signature, measures, the seed and index it was drawn from, and `verified`: what its
verification measured), so ids and grading stay stable across rebuilds.

Split: `eval` holds out whole signatures (generate/store.split_of, the orm generator's rule:
one signature in five).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from sandbox_env.constants import PACKAGE_DIR
from sandbox_env.families.base import TaskRow
from sandbox_env.families.fastapi import APP_PATH, REQUEST_TIMEOUT, build_prompt
from sandbox_env.generate import api_tree
from sandbox_env.generate.api_checks import build_checks
from sandbox_env.generate.api_reference import render_reference
from sandbox_env.generate.api_spec import render_spec, title
from sandbox_env.generate.store import split_of
from sandbox_env.generate.task_lines import read_lines, write_lines

GENERATED_FASTAPI_FILE = PACKAGE_DIR / "data" / "generated_fastapi.jsonl"
CATEGORY = "generated_api"


def record_of(tree: dict[str, Any], token_seed: str) -> dict[str, Any]:
    """The unverified task record of one tree (tokens drawn from `token_seed`'s own stream)."""
    checks, vary = build_checks(tree, random.Random(f"fastapi-gen-tokens:{token_seed}"))
    spec, coverage = render_spec(tree)
    measures = api_tree.measures(tree, len(checks))
    signature = api_tree.signature(tree)
    return {
        "task_id": api_tree.task_id(tree),
        "family": "fastapi",
        "tree": tree,
        "title": title(tree),
        "spec": spec,
        "reference": render_reference(tree),
        "checks": checks,
        "vary": vary,
        "coverage": coverage,
        "signature": signature,
        "split": split_of(signature),
        "difficulty": measures.pop("difficulty"),
        "measures": measures,
    }


def candidate_record(seed: int, index: int, grammar: int = api_tree.GRAMMAR) -> dict[str, Any]:
    """The unverified record (seed, index) draws under a grammar (the newest unless given)."""
    token_seed = f"{seed}:{index}" if grammar == 1 else f"g{grammar}:{seed}:{index}"
    record = record_of(api_tree.candidate(seed, index, grammar), token_seed)
    record["drawn"] = {"seed": seed, "index": index}
    if grammar > 1:
        record["grammar"] = grammar
    return record


def grammar_of(record: dict[str, Any]) -> int:
    """The grammar a record was drawn under (lines from before grammars carry none: grammar 1)."""
    return record.get("grammar", 1)


def write(path: Path, records: list[dict[str, Any]]) -> None:
    write_lines(path, records)


def read(path: Path = GENERATED_FASTAPI_FILE) -> list[dict[str, Any]]:
    return read_lines(path)


def compile_generated_fastapi(record: dict[str, Any]) -> TaskRow:
    """The task row of one stored generated fastapi task, graded like any fastapi task (fraction of checks)."""
    return TaskRow(
        task_id=record["task_id"],
        family="fastapi",
        difficulty=record["difficulty"],
        category=CATEGORY,
        prompt=build_prompt({"title": record["title"], "spec": record["spec"]}),
        files={},
        collect=[APP_PATH],
        grading={
            "checks": record["checks"],
            "openapi_url": "/openapi.json",
            "catch_all": False,
            "request_timeout": REQUEST_TIMEOUT,
            "vary": record["vary"],
        },
        source="generated",
        split=record["split"],
        signature=record["signature"],
        measures=dict(record["measures"]),
    )
