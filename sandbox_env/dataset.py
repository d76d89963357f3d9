"""The shipped task dataset, filtered the way load_environment's arguments ask.

Rows are plain JSON lines; only `build_dataset` needs the `datasets` library (with
pandas and pyarrow behind it, seconds of CPU to import), so it is imported there: the
policy server and the CLI read rows without paying for it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox_env import pass_rates as measured
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
    pass_rates: str | None = None,
    min_pass_rate: float | None = None,
    max_pass_rate: float | None = None,
) -> list[dict[str, Any]]:
    """Rows matching every given filter; unknown values are one-line errors that name what exists.

    `split`: "train", "eval" or "all" (SPLITS); see DEFAULT_SPLIT for the default. `pass_rates`: a file
    `websandbox calibrate` wrote, whose measured rates set difficulty and the `min_pass_rate` /
    `max_pass_rate` bounds keep (sandbox_env/pass_rates.py); a difficulty filter reads the measured one. Every front
    door and `websandbox eval`'s own check before a run call this one function, so a selection
    the check passes is the one that loads.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    if pass_rates is None and (min_pass_rate is not None or max_pass_rate is not None):
        raise ValueError("min_pass_rate and max_pass_rate need pass_rates: the file `websandbox calibrate` writes")
    if pass_rates is not None:  # measured difficulty before the filters, so a difficulty filter reads it
        rows = measured.annotate(rows, pass_rates)
    if isinstance(task_ids, str):
        raise ValueError(f"task_ids is a list of task ids, not one string: write {json.dumps([task_ids])}")
    in_split = rows if split == "all" else [r for r in rows if r["info"].get("split", "train") == split]
    filters = {"family": _as_list(family), "difficulty": _as_list(difficulty), "category": _as_list(category)}
    for key, wanted in filters.items():
        if wanted is not None:
            _refuse_unknown_values(key, wanted, rows, in_split, split)
    if task_ids is not None:
        _refuse_unknown_task_ids(task_ids, rows, in_split, split)
    out = []
    for r in in_split:
        info = r["info"]
        if task_ids is not None and info["task_id"] not in task_ids:
            continue
        if task_ids is None and filters["family"] is None and info["family"] == "smoke" and not include_smoke:
            continue
        if all(wanted is None or info[key] in wanted for key, wanted in filters.items()):
            out.append(r)
    if not out:
        given = {k: v for k, v in {**filters, "task_ids": task_ids, "split": split}.items() if v is not None}
        raise ValueError(f"no task matches all the filters {json.dumps(given)}; {LIST_TASKS}")
    kept = measured.within(out, min_pass_rate, max_pass_rate)
    if not kept:
        raise ValueError(f"no selected task has a pass rate within [{min_pass_rate}, {max_pass_rate}] in {pass_rates}")
    return spread(kept)


def _round_robin(groups: list[list[Any]]) -> list[Any]:
    out, queues = [], [list(g) for g in groups]
    while any(queues):
        out += [q.pop(0) for q in queues if q]
    return out


def spread(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows in turn by family, and within a family in turn by source (hand, generated, repair, composed), each
    group in its own order: the first N rows (`vf-eval -n N`) sample every family and source rather than the
    first family's hand-written tasks. Deterministic: the same rows always come in the same order."""
    families: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in rows:
        families.setdefault(r["info"]["family"], {}).setdefault(r["info"].get("source", "hand"), []).append(r)
    return _round_robin([_round_robin(list(sources.values())) for _, sources in sorted(families.items())])


def set_digest(rows: list[dict[str, Any]]) -> str:
    """A short digest of a set of task rows: their ids, prompts and grading, in id order. Two installs whose
    digest of the `eval` split agrees grade the same benchmark; any change to any of its tasks changes it."""
    h = hashlib.sha256()
    for row in sorted(rows, key=lambda r: r["info"]["task_id"]):
        h.update(json.dumps([row["info"]["task_id"], row["question"], row["info"].get("grading")], sort_keys=True).encode())
    return h.hexdigest()[:16]


def split_summary(rows: list[dict[str, Any]], split: str = "eval") -> str:
    """`eval set: N tasks (family n, ...), digest D`: the line a build prints and a report repeats."""
    chosen = [r for r in rows if r["info"].get("split", "train") == split and r["info"]["family"] != "smoke"]
    families: dict[str, int] = {}
    for r in chosen:
        families[r["info"]["family"]] = families.get(r["info"]["family"], 0) + 1
    per = ", ".join(f"{f} {n}" for f, n in sorted(families.items()))
    return f"{split} set: {len(chosen)} tasks ({per}), digest {set_digest(chosen)}"


LIST_TASKS = "see `websandbox tasks` for every task"
CLOSE_MATCHES = 5  # close task ids named for a mistyped one
NAMED = 10  # unknown values named in one message; the rest are counted


def _named(values: list[Any]) -> str:
    """Values for a one-line message: the first NAMED, then how many more."""
    shown = ", ".join(map(repr, values[:NAMED]))
    return shown + (f" and {len(values) - NAMED} more" if len(values) > NAMED else "")


def _refuse_unknown_values(
    key: str, wanted: list[Any], rows: list[dict[str, Any]], in_split: list[dict[str, Any]], split: str
) -> None:
    """A value no task has is unknown (every value is named: they are few); one that only another split has says so."""
    anywhere = {r["info"][key] for r in rows}
    unknown = [w for w in wanted if w not in anywhere]
    if unknown:
        raise ValueError(f"unknown {key} {_named(unknown)}; known: {', '.join(sorted(anywhere))}")
    here = {r["info"][key] for r in in_split}
    elsewhere = [w for w in wanted if w not in here]
    if elsewhere:
        raise ValueError(
            f"no task of {key} {_named(elsewhere)} is in split {split!r}; there: {', '.join(sorted(here))} "
            '(split "all" has every task)'
        )


def _close_ids(missing: list[str], known: list[str]) -> list[str]:
    """Up to CLOSE_MATCHES known ids near the first few missing ones (difflib's ratio, its default cutoff)."""
    close: list[str] = []
    for task_id in missing[:3]:
        for match in difflib.get_close_matches(task_id, known, n=CLOSE_MATCHES):
            if match not in close:
                close.append(match)
    return close[:CLOSE_MATCHES]


def _refuse_unknown_task_ids(task_ids: list[str], rows: list[dict[str, Any]], in_split: list[dict[str, Any]], split: str) -> None:
    """Ids no task has are named with the known ids closest to them; ids of another split say which split to ask for."""
    here = {r["info"]["task_id"] for r in in_split}
    unknown = [t for t in task_ids if t not in here]
    if not unknown:
        return
    anywhere = {r["info"]["task_id"] for r in rows}
    missing = [t for t in unknown if t not in anywhere]
    if missing:
        close = _close_ids(missing, sorted(anywhere))
        near = f"; close ones: {', '.join(close)}" if close else ""
        raise ValueError(f"unknown task id(s) {_named(missing)}{near}; {LIST_TASKS}")
    raise ValueError(
        f'task id(s) {_named(unknown)} not in split {split!r}; give split "all", or pick from `websandbox tasks --split {split}`'
    )


def build_dataset(rows: list[dict[str, Any]]) -> Dataset:
    from datasets import Dataset

    return Dataset.from_list(rows)


TASKSET_FILTERS = ("family", "difficulty", "category", "task_ids", "split", "pass_rates", "min_pass_rate", "max_pass_rate")


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
