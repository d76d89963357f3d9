"""Compile the task sources (sandbox_env/tasks/) into the dataset that ships with the package."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sandbox_env.constants import DATA_FILE
from sandbox_env.families import FAMILY_NAMES, get_family
from sandbox_env.families.base import TaskRow
from sandbox_env.generate.api_store import compile_generated_fastapi
from sandbox_env.generate.api_store import read as read_generated_fastapi
from sandbox_env.generate.compose_store import compile_composed
from sandbox_env.generate.compose_store import read as read_composed
from sandbox_env.generate.dj_store import compile_generated_django
from sandbox_env.generate.dj_store import read as read_generated_django
from sandbox_env.generate.repair_store import REPAIR_FILE, compile_repair
from sandbox_env.generate.repair_store import read as read_repairs
from sandbox_env.generate.store import GENERATED_FILE
from sandbox_env.generate.store import read as read_generated
from sandbox_env.verify.answers import alt_names
from sandbox_env.verify.base import task_folder, task_folders


def compile_generated(path: Path = GENERATED_FILE) -> list[TaskRow]:
    """The verified generated orm tasks (generate/store.py's file) as task rows."""
    fam = get_family("orm")
    return [fam.compile_generated(r) for r in read_generated(path)]


def compile_repairs(
    bases: dict[str, TaskRow], families: tuple[str, ...] = FAMILY_NAMES, path: Path = REPAIR_FILE
) -> list[TaskRow]:
    """The verified repair tasks (generate/repair_store.py's file) of `families` over their base tasks' rows.

    Each row's `measures["alts"]` names its base task's alt_* answers (read from the base's folder here,
    never stored): correct answers written another way, which `build_tasks.py --verify` grades under the
    repair row (stages/repair.py).
    """
    out = []
    for record in read_repairs(path):
        if record["family"] not in families:
            continue
        base = bases.get(record["base_task"])
        if base is None:
            raise ValueError(f"repair task {record['task_id']}: its base task {record['base_task']} is not compiled")
        alts = alt_names(record["family"], task_folder(record["family"], record["base_task"]))
        out.append(compile_repair(record, base, alts))
    return out


def compile_all(families: tuple[str, ...] = FAMILY_NAMES, generated: bool = True) -> list[TaskRow]:
    """Every hand-written task, then (with the orm family) every verified generated one, the repairs, the composed,
    the generated fastapi tasks."""
    rows: list[TaskRow] = []
    seen: set[str] = set()
    for name in families:
        folders = task_folders(name)
        if not folders:
            continue
        fam = get_family(name)
        for folder in folders:
            row = fam.compile_task(folder)
            if row.task_id in seen:
                raise ValueError(f"duplicate task id {row.task_id}")
            seen.add(row.task_id)
            rows.append(row)
    if generated and "orm" in families:
        for row in compile_generated():
            if row.task_id in seen:
                raise ValueError(f"duplicate task id {row.task_id}")
            seen.add(row.task_id)
            rows.append(row)
    if generated:
        bases = {r.task_id: r for r in rows}
        composed = [compile_composed(r) for r in read_composed()] if "fastapi" in families else []
        # the generated fastapi tasks (generate/api_store.py's file)
        api = [compile_generated_fastapi(r) for r in read_generated_fastapi()] if "fastapi" in families else []
        # the generated django tasks (generate/dj_store.py's file)
        dj = [compile_generated_django(r) for r in read_generated_django()] if "django" in families else []
        for row in [*compile_repairs(bases, families), *composed, *api, *dj]:
            if row.task_id in seen:
                raise ValueError(f"duplicate task id {row.task_id}")
            seen.add(row.task_id)
            rows.append(row)
    return rows


def write_dataset(rows: list[TaskRow], path: Path = DATA_FILE) -> None:
    """Write the dataset whole or not at all: a process reading it meanwhile sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w") as fh:
        for row in rows:
            fh.write(json.dumps(row.to_row(), sort_keys=True) + "\n")
    os.replace(tmp, path)
