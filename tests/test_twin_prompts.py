"""Every question names its task, and the only prompt twins are the documented ones (docs/tasks.md, "Twin prompts").

A row's `question` is its prompt and a last `Task id: <id>` line (families/question.py), so no two
questions are equal. Rows may share a prompt (`info["prompt"]`) only as repair tasks of one base
task with different broken files: the report renders their failures alike, and telling the bugs
apart is the model's work in /workspace.
"""

from __future__ import annotations

from collections import defaultdict

from sandbox_env.dataset import load_rows
from sandbox_env.families.base import TaskRow
from sandbox_env.families.question import prompt_of, question_text, task_id_in


def prompt_twins(rows: list[dict]) -> list[list[dict]]:
    """Groups of two or more rows that share a prompt (the question without its task id line)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["info"]["prompt"].strip()].append(row)
    return [group for group in groups.values() if len(group) > 1]


def test_every_question_ends_with_its_own_task_id_line():
    for row in load_rows():
        info = row["info"]
        assert task_id_in(row["question"]) == info["task_id"], info["task_id"]
        assert row["question"] == question_text(info["task_id"], info["prompt"]), info["task_id"]
        assert prompt_of(row["question"]) == info["prompt"].rstrip(), info["task_id"]


def test_no_two_questions_are_equal():
    seen: dict[str, str] = {}
    for row in load_rows():
        other = seen.setdefault(row["question"].strip(), row["info"]["task_id"])
        assert other == row["info"]["task_id"], f"{other} and {row['info']['task_id']} share a question"


def test_prompt_twins_are_exactly_repairs_of_one_base_with_different_broken_files():
    twins = prompt_twins(load_rows())
    assert twins, "docs/tasks.md documents prompt twins among repair tasks; update it if none are left"
    for group in twins:
        ids = [r["info"]["task_id"] for r in group]
        tasks = [TaskRow.from_info(r["info"]) for r in group]
        assert {t.source for t in tasks} == {"repair"}, f"prompt twins that are not all repair tasks: {ids}"
        assert len({t.base_task for t in tasks}) == 1, f"prompt twins of different base tasks: {ids}"
        broken = [tuple(sorted(t.files.items())) for t in tasks]
        assert len(set(broken)) == len(broken), f"prompt twins with the same starting files: {ids}"


def test_the_task_id_line_is_read_only_from_the_last_line():
    assert task_id_in("Task id: a\n\nthe prompt") is None
    assert task_id_in("the prompt\n\nTask id: orm_adv_01\n") == "orm_adv_01"
    assert task_id_in("the prompt\n\nTask id: ") is None
    assert prompt_of("the prompt, no id") == "the prompt, no id"
