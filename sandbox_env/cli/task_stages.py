"""`websandbox tasks STAGE ...`: every stage of the task pipeline under one command.

    websandbox tasks [--family F] [--split S]   list every task (cli/tasks.py)
    websandbox tasks build [--verify] [--mutants] [--family F] [--task ID]
                                                compile the sources into the dataset, and verify (stages/build.py)
    websandbox tasks freeze [ID ...]            orm: write a hand-written task's expected rows and variants
    websandbox tasks generate --seed N ...      draw, verify and store generated orm tasks (stages/generate_orm.py)
    websandbox tasks reverify [--task ID] [--prune]
                                                verify the stored generated orm tasks again
    websandbox tasks rerender                   re-render the stored generated tasks' English from their trees
    websandbox tasks repair [--family F] ...    make, verify and store repair tasks (stages/repair.py)
    websandbox tasks compose [--seed S] ...     compose, verify and store composed fastapi tasks (stages/compose.py)
    websandbox tasks generate_fastapi --seed S [--target N]
                                                draw, verify and store generated fastapi tasks (stages/generate_fastapi.py)
    websandbox tasks generate_django --seed S [--target N]
                                                draw, verify and store generated django tasks (stages/generate_django.py)

Each stage is its module's own command, given the rest of the line (`websandbox tasks repair --help`
shows that module's options); `python build_tasks.py` is `websandbox tasks build`, kept for the
Makefile and for a checkout without the command installed. Which module makes, verifies or stores
what is in docs/tasks.md.
"""

from __future__ import annotations

from collections.abc import Callable


def _build(argv: list[str]) -> int:
    from sandbox_env.stages.build import main

    return main(argv)


def _freeze(argv: list[str]) -> int:
    from sandbox_env.verify.orm import main

    if {"-h", "--help"} & set(argv):
        print("usage: websandbox tasks freeze [--root DIR] [TASK_ID ...]  (orm: every task of the folder when no id)")
        return 0
    return main(["--freeze", *argv])


def _reverify(argv: list[str]) -> int:
    from sandbox_env.stages.generate_orm import main

    return main(argv)


def _rerender(argv: list[str]) -> int:
    from sandbox_env.generate.store import main

    return main(["--rerender", *argv])


def _repair(argv: list[str]) -> int:
    from sandbox_env.stages.repair import main

    return main(argv)


def _compose(argv: list[str]) -> int:
    from sandbox_env.stages.compose import main

    return main(argv)


def _generate_fastapi(argv: list[str]) -> int:
    from sandbox_env.stages.generate_fastapi import main

    return main(argv)


def _generate_django(argv: list[str]) -> int:
    from sandbox_env.stages.generate_django import main

    return main(argv)


# `generate` is `websandbox generate`'s own parser (cli/main.py), reached under this name too
STAGES: dict[str, Callable[[list[str]], int] | None] = {
    "build": _build,
    "freeze": _freeze,
    "generate": None,
    "reverify": _reverify,
    "rerender": _rerender,
    "repair": _repair,
    "compose": _compose,
    "generate_fastapi": _generate_fastapi,
    "generate_django": _generate_django,
}
