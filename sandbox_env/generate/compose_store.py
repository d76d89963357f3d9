"""Verified composed fastapi tasks as JSON lines, and how a line becomes a task row.

`python -m sandbox_env.stages.compose` composes and verifies tasks in containers and writes
sandbox_env/data/composed_tasks.jsonl (committed); `build_tasks.py` reads it with no container.
A line holds what generate/compose_logic.compose made (the parts' ids, prefixes, rules and
their values, spec, reference, checks, drawn-token declarations, coverage entries, split,
signature, measures) and what verification recorded (`verified`: the mutants killed, the
wrong answers' scores). A line is self-contained: a later change to a part's folder does not
change a stored task, so task ids and grading stay stable across rebuilds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox_env.constants import PACKAGE_DIR
from sandbox_env.families.base import TaskRow
from sandbox_env.families.fastapi import APP_PATH, REQUEST_TIMEOUT, build_prompt
from sandbox_env.generate.compose_logic import INVALID_BODY
from sandbox_env.generate.task_lines import read_lines, write_lines

COMPOSED_FILE = PACKAGE_DIR / "data" / "composed_tasks.jsonl"
CATEGORY = "composed"


def write(path: Path, records: list[dict[str, Any]]) -> None:
    write_lines(path, records)


def read(path: Path = COMPOSED_FILE) -> list[dict[str, Any]]:
    return read_lines(path)


def rule_checks(checks: list[dict[str, Any]]) -> list[str]:
    """The checks of the app-wide rules: their own (`rule: ...`) and the part checks invalid_400 rewrote (a step
    expecting its body). stamp's header is expected on every step of every check, so an app without it fails
    them all; its own check is the one that gates."""
    out = []
    for check in checks:
        rewritten = any(step["expect"].get("json") == INVALID_BODY for step in check["steps"])
        if check["name"].startswith("rule: ") or rewritten:
            out.append(check["name"])
    return out


RULES_GATE_SENTENCE = (
    "Scoring: the share of the checks that pass, halved while any of the rules for the whole service does not hold."
)


def compile_composed(record: dict[str, Any]) -> TaskRow:
    """The task row of one stored composed task, graded like any fastapi task."""
    return TaskRow(
        task_id=record["task_id"],
        family="fastapi",
        difficulty=record["difficulty"],
        category=CATEGORY,
        prompt=build_prompt({"title": record["title"], "spec": record["spec"].rstrip() + "\n\n" + RULES_GATE_SENTENCE}),
        files={},
        collect=[APP_PATH],
        grading={
            "checks": record["checks"],
            "openapi_url": "/openapi.json",
            "catch_all": False,
            "request_timeout": REQUEST_TIMEOUT,
            "vary": record["vary"],
            "scoring": "rules_gate",  # families/fastapi.py `reward`: the app-wide rules gate the parts
            "rule_checks": rule_checks(record["checks"]),
        },
        source="composed",
        split=record["split"],
        signature=record["signature"],
        # the composed tier's measures, named as the hand-written composed tasks name theirs ([composed] in task.toml)
        measures={**record["measures"], "tier": "composed", "components": record["parts"], "app_wide": record["rules"]},
    )
