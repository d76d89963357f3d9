"""The shipped task dataset, filtered the way load_environment's arguments ask.

Rows are plain JSON lines; only `build_dataset` needs the `datasets` library (with
pandas and pyarrow behind it, seconds of CPU to import), so it is imported there: the
policy server and the CLI read rows without paying for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox_env.constants import DATA_FILE

# "train": every hand-written task and the generated tasks of the train signatures; "eval": the
# generated tasks whose structural signatures are held out; "all": both. A repair task
# (generate/repair_store.py) has its base task's split, so no repair of an eval task is in train. The default is "all", so
# that every existing call sees every task; a training run passes split="train" and its held-out
# evaluation split="eval" (environments/websandbox/README.md).
SPLITS = ("train", "eval", "all")
DEFAULT_SPLIT = "all"

if TYPE_CHECKING:
    from datasets import Dataset


def load_rows(path: Path = DATA_FILE) -> list[dict[str, Any]]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `python build_tasks.py` to compile the task sources")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _as_list(value: str | list[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def select_rows(
    rows: list[dict[str, Any]],
    family: str | list[str] | None = None,
    difficulty: str | list[str] | None = None,
    category: str | list[str] | None = None,
    task_ids: list[str] | None = None,
    include_smoke: bool = False,
    split: str = DEFAULT_SPLIT,
) -> list[dict[str, Any]]:
    """Rows matching every given filter; unknown values are errors that list what exists.

    `split`: "train", "eval" or "all" (SPLITS); see DEFAULT_SPLIT for the default.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    if split != "all":
        rows = [r for r in rows if r["info"].get("split", "train") == split]
    filters = {"family": _as_list(family), "difficulty": _as_list(difficulty), "category": _as_list(category)}
    for key, wanted in filters.items():
        if wanted is None:
            continue
        known = sorted({r["info"][key] for r in rows})
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise ValueError(f"unknown {key} {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    if task_ids is not None:
        known_ids = {r["info"]["task_id"] for r in rows}
        unknown = [t for t in task_ids if t not in known_ids]
        if unknown:
            raise ValueError(f"unknown task id(s) {', '.join(map(repr, unknown))}; see sandbox_env/tasks/ for the ids")
    out = []
    for r in rows:
        info = r["info"]
        if task_ids is not None and info["task_id"] not in task_ids:
            continue
        if task_ids is None and filters["family"] is None and info["family"] == "smoke" and not include_smoke:
            continue
        if all(wanted is None or info[key] in wanted for key, wanted in filters.items()):
            out.append(r)
    if not out:
        raise ValueError("no task matches the filters " + json.dumps({**filters, "task_ids": task_ids, "split": split}))
    return out


def build_dataset(rows: list[dict[str, Any]]) -> Dataset:
    from datasets import Dataset

    return Dataset.from_list(rows)


TASKSET_FILTERS = ("family", "difficulty", "category", "task_ids", "split")  # the filters of select_rows


def taskset_spec(task_args: dict[str, Any] | None = None) -> dict[str, Any]:
    """The websandbox taskset config from `load_environment`-style arguments: filters, then task knobs."""
    args = dict(task_args or {})
    taskset: dict[str, Any] = {"id": "websandbox"}
    for key in TASKSET_FILTERS:
        if args.get(key) is not None:
            taskset[key] = args.pop(key)
    if args:
        taskset["task"] = args
    return taskset
