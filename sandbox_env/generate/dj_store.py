"""Verified generated django tasks as JSON lines, and how a line becomes a task row.

`websandbox tasks generate_django` (stages/generate_django.py) draws candidates
(generate/dj_task.py), verifies them in the image and writes
sandbox_env/data/generated_django.jsonl; `build_tasks.py` reads it with no container.

A line is self-contained: the project tree with its stubs, the visible tests, the hidden tests
and their `[[vary]]` declarations, the reference and junk deliverables, the spec, the node
(the feature tree with its constants), the domain template and seed, the seed and index it was
drawn from, the split, the signature, the measures, and what verification recorded
(`verified`: controls, mutants killed, seconds), and the generator grammar it was drawn under when
that is not the first (`grammar`, read by `grammar_of`). It compiles through the django family's own
`compile_files`, the path every hand-written django task takes, so a stored task is graded
exactly like one: frozen suite, hidden tests with data drawn per grading, canaries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox_env.constants import PACKAGE_DIR
from sandbox_env.families.base import TaskRow
from sandbox_env.families.django import compile_files
from sandbox_env.generate.task_lines import read_lines, write_lines

GENERATED_DJANGO_FILE = PACKAGE_DIR / "data" / "generated_django.jsonl"
SOURCE = "generated"


def grammar_of(record: dict[str, Any]) -> int:
    """The grammar a line was drawn under (generate/dj_task.py's GRAMMARS): lines from before grammars carry none,
    and were drawn under grammar 1."""
    return record.get("grammar", 1)


def write(path: Path, records: list[dict[str, Any]]) -> None:
    write_lines(path, records)


def read(path: Path = GENERATED_DJANGO_FILE) -> list[dict[str, Any]]:
    return read_lines(path)


def task_meta(record: dict[str, Any]) -> dict[str, Any]:
    """What a hand-written task's task.toml would hold."""
    return {
        "id": record["task_id"],
        "difficulty": record["difficulty"],
        "category": record["category"],
        "title": record["title"],
        "spec": record["spec"],
        "deliverables": record["deliverables"],
        "vary": record["vary"],
        **{k: record[k] for k in ("budget_tests", "hidden_budget_tests") if k in record},
    }


def compile_generated_django(record: dict[str, Any]) -> TaskRow:
    """The task row of one stored generated django task."""
    row = compile_files(
        task_meta(record),
        record["tree"],
        record["tests"],
        record["hidden"],
        record["reference"],
        bool(record.get("naive")),
        record["task_id"],
    )
    row.source = SOURCE
    row.split = record["split"]
    row.signature = record["signature"]
    row.measures = {
        **record["measures"],
        "domain_seed": record["domain_seed"],
        "seed": record["seed"],
        "index": record["index"],
        "checks": len(row.grading["test_ids"]),
    }
    return row


def write_folder(record: dict[str, Any], folder: Path) -> Path:
    """The task laid out as a hand-written task folder (task.toml, tree/, tests/, hidden/, reference/, junk/, naive/).

    Verification grades a generated task through the same functions as a hand-written one
    (verify/django.py's controls, verify/sensitivity.py's mutants), which read a folder.
    """
    import json

    folder.mkdir(parents=True, exist_ok=True)
    meta = task_meta(record)
    lines = [f"{k} = {json.dumps(meta[k])}" for k in ("id", "difficulty", "category", "title", "spec", "deliverables")]
    for k in ("budget_tests", "hidden_budget_tests"):
        if k in meta:
            lines.append(f"{k} = {json.dumps(meta[k])}")
    for d in meta["vary"]:
        lines.append("\n[[vary]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in d.items()]
    (folder / "task.toml").write_text("\n".join(lines) + "\n")
    for group in ("tree", "tests", "hidden", "reference", "junk", "naive"):
        for path, text in record.get(group, {}).items():
            target = folder / group / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    return folder
