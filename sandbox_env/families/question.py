"""The user message of a task (a row's `question`): the task's prompt, then a line naming the task.

Decisions:
- The last line of every question is `Task id: <task_id>`. Both front doors send `question`
  unchanged as the user message (classic: verifiers builds [system, user(question)]; v1:
  `WebSandboxData.prompt`), so whoever answers a conversation can tell which task it is from
  the conversation alone. The scripted policies (sandbox_env/policy/) find the task they play
  by this line, never by prompt text: repair tasks of one base task can share their whole
  prompt (docs/tasks.md, "Twin prompts"), and a lookup by text played one twin's plan on the other.
- The line names nothing a model can use: the id's words are the task's title or category,
  which the prompt states anyway, and its hex part is a hash. It changes no grading: graders
  read the prompt without it (`TaskRow.prompt`, `info["prompt"]`).
- The line goes last, not first, so the long preamble many tasks share (the orm bookshop's
  schema) stays a common prefix that an inference server can cache across tasks.
"""

from __future__ import annotations

TASK_ID_LABEL = "Task id: "


def question_text(task_id: str, prompt: str) -> str:
    """The question of task `task_id`: its prompt, a blank line, and the task id line."""
    return f"{prompt.rstrip()}\n\n{TASK_ID_LABEL}{task_id}"


def task_id_in(question: str) -> str | None:
    """The task id that `question`'s last line names, or None when its last line is not a task id line."""
    lines = question.rstrip().splitlines()
    last = lines[-1].strip() if lines else ""
    if not last.startswith(TASK_ID_LABEL):
        return None
    return last.removeprefix(TASK_ID_LABEL).strip() or None


def prompt_of(question: str) -> str:
    """`question` without its task id line (the prompt the task was compiled with, trailing space aside)."""
    if task_id_in(question) is None:
        return question
    return question.rstrip().rsplit("\n", 1)[0].rstrip()
