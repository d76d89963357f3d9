"""What every family provides, and the plain data that passes between build, run and grade."""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sandbox_env.families.question import question_text
from sandbox_env.text import valid_json_text

if TYPE_CHECKING:
    from sandbox_env.grading.grader import Grader
    from sandbox_env.sandbox import Sandbox

METRIC_NAMES = (
    "module_imported",
    "checks_passed",
    "suite_usable",
    "correct_but_naive",
    "tests_passed",
    "tampered",
    "scoring_error",
    "unproven_harness_fault",
)
DIFFICULTIES = ("easy", "medium", "hard")
_JSON_FIELDS = ("files", "collect", "grading", "fixture_seeds", "measures")
SOURCES = ("hand", "generated", "repair", "composed")
SPLITS = ("train", "eval")


@dataclass
class TaskRow:
    """One task, compiled: what the model sees, what to lay out, what grading needs."""

    task_id: str
    family: str
    difficulty: str
    category: str
    prompt: str
    files: dict[str, str] = field(default_factory=dict)
    collect: list[str] = field(default_factory=list)
    grading: dict[str, Any] = field(default_factory=dict)
    # where the task comes from (hand-written folder, the orm generator, a repair), its split, its structural
    # signature, the fixture seeds (orm variants) it is graded on, and the measures of its difficulty
    source: str = "hand"
    split: str = "train"
    signature: str = ""
    fixture_seeds: list[int] = field(default_factory=list)
    measures: dict[str, Any] = field(default_factory=dict)
    # a repair task's base task (generate/repair_store.py); "" for every other task
    base_task: str = ""

    def to_row(self) -> dict[str, Any]:
        info = {k: v for k, v in asdict(self).items() if k not in _JSON_FIELDS}
        info.update({k: json.dumps(getattr(self, k), sort_keys=True) for k in _JSON_FIELDS})
        # verifiers 0.3.1 reads a `task` column as a serialized payload, so the family lives in info only.
        # `question` (what the model reads) ends with the task id line (families/question.py); the
        # graders read `info["prompt"]`, the prompt without it.
        return {"question": question_text(self.task_id, self.prompt), "answer": "", "info": info}

    @classmethod
    def from_info(cls, info: dict[str, Any]) -> TaskRow:
        data = dict(info)
        for k in _JSON_FIELDS:
            if isinstance(data.get(k), str):
                data[k] = json.loads(data[k])
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass
class Grade:
    """The outcome of grading one rollout; stored as state["grade"]."""

    score: float
    reason: str
    checks: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    scoring_error: str | None = None
    tampered: bool = False
    # a harness fault that the backend could not prove was the harness's: what it lacks (rollout/core.py)
    unproven_harness_fault: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the rollout's state, which is saved and sent on (JSON as UTF-8, msgpack).

        Parts of a grade come from the code under test (error texts, an orm answer's rows), so
        every text is made valid Unicode and every int outside msgpack's 64 bits becomes its
        decimal text: a lone surrogate or 2**64 in a received row made the whole rollout's
        result unsendable.
        """
        return _wire_ints(valid_json_text(asdict(self)))

    @classmethod
    def harness_fault(cls, reason: str) -> Grade:
        return cls(score=0.0, reason=f"scoring error: {reason}", scoring_error=reason)

    @classmethod
    def tamper(cls, reason: str, checks: list[dict[str, Any]] | None = None) -> Grade:
        return cls(score=0.0, reason=f"tampered: {reason}", checks=checks or [], tampered=True)


_INT_RANGE = (-(2**63), 2**64 - 1)  # what msgpack carries


def _wire_ints(value: Any) -> Any:
    """`value` with every int outside msgpack's range turned into its decimal text, in place, without recursion."""
    stack = [value]
    while stack:
        node = stack.pop()
        slots = enumerate(node) if isinstance(node, list) else node.items() if isinstance(node, dict) else ()
        for key, item in list(slots):
            if type(item) is int and not _INT_RANGE[0] <= item <= _INT_RANGE[1]:
                node[key] = str(item)
            elif isinstance(item, list | dict):
                stack.append(item)
    return value


def read_task_toml(folder: Path) -> dict[str, Any]:
    """The task.toml of a task folder, with the fields every family needs checked."""
    path = folder / "task.toml"
    data = tomllib.loads(path.read_text())
    for key in ("id", "difficulty", "category", "spec"):
        if key not in data:
            raise ValueError(f"{path}: missing required key {key!r}")
    if data["id"] != folder.name:
        raise ValueError(f"{path}: id {data['id']!r} differs from its folder name {folder.name!r}")
    if data["difficulty"] not in DIFFICULTIES:
        raise ValueError(f"{path}: difficulty must be one of {DIFFICULTIES}, got {data['difficulty']!r}")
    return data


COMPOSED_KEYS = {"components", "app_wide", "interaction_checks"}


def composed_measures(
    meta: dict[str, Any], check_names: list[str], where: str, error: type[ValueError] = ValueError
) -> dict[str, Any]:
    """A composed task's structure, from its [composed] table: what it combines and what ties it together.

    The table lists `components` (the single tasks combined, 3 to 5), `app_wide` (the one or two
    features whose effect on the others the task grades) and `interaction_checks` (names of the
    checks, or for django the test ids, that test such an effect); a composed task is `hard`.
    """
    table = meta["composed"]
    if set(table) != COMPOSED_KEYS:
        raise error(f"{where}: [composed] needs exactly {sorted(COMPOSED_KEYS)}, has {sorted(table)}")
    if meta.get("difficulty") != "hard":
        raise error(f'{where}: a composed task is hard; set difficulty = "hard"')
    components, app_wide, interaction = (list(table[k]) for k in ("components", "app_wide", "interaction_checks"))
    if not 3 <= len(components) <= 5 or not 1 <= len(app_wide) <= 2:
        raise error(f"{where}: a composed task combines 3 to 5 components and 1 or 2 app-wide features")
    unknown = [n for n in interaction if n not in check_names]
    if unknown or not interaction:
        raise error(f"{where}: interaction_checks must name checks of the task (unknown: {unknown})")
    return {
        "tier": "composed",
        "components": components,
        "app_wide": app_wide,
        "interaction_checks": len(interaction),
        "checks": len(check_names),
    }


async def collect_files(sb: Sandbox, paths: list[str]) -> dict[str, Any]:
    """The final state of a file deliverable: each path's text (None when it does not exist)."""
    files = await sb.read_files(list(paths))
    return {"files": {p: (None if d is None else d.decode("utf-8", "replace")) for p, d in files.items()}}


class Family(Protocol):
    """What the env, the grader and verification need of a family; nothing else is looked up."""

    name: str

    def compile_task(self, folder: Path) -> TaskRow: ...

    async def setup(self, sb: Sandbox, task: TaskRow) -> None: ...

    async def collect(self, sb: Sandbox, task: TaskRow) -> dict[str, Any]: ...

    async def grade(self, final: dict[str, Any], task: TaskRow, grader: Grader) -> Grade: ...
