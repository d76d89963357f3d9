"""Gradings in fresh containers, cold or with the grader program started ahead of time."""

from __future__ import annotations

import pytest

from sandbox_env.families import grade_final
from sandbox_env.grading.grader import Grader
from sandbox_env.stages.compile import compile_all
from sandbox_env.verify import reference_calls
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker


async def test_a_spawned_program_sees_files_written_before_its_stdin(backend, image):
    async with backend.sandbox(image) as sb:
        handle = await sb.spawn(["python", "-c", "import sys; sys.stdin.readline(); print(open('f').read())"])
        await sb.write_files({"f": "written later"})
        res = await sb.feed(handle, b"go\n", timeout=10)
        assert res.stdout == "written later\n" and res.exit_code == 0


async def test_prewarmed_grading_gives_the_same_grades_as_cold_grading(backend, image):
    tasks = {t.family: t for t in compile_all() if t.family in ("fastapi", "django", "smoke")}
    finals = {}
    for family, task in tasks.items():
        calls = reference_calls(family, task.task_id)
        finals[family] = (await scripted_rollout(backend, image, task, calls)).final
    warm = Grader(backend, image, prewarm=1)
    try:
        for family, task in tasks.items():
            cold_grade = await grade_final(task, finals[family], Grader(backend, image))
            warm_grade = await grade_final(task, finals[family], warm)
            assert cold_grade.score == warm_grade.score == 1.0, (family, warm_grade.reason)
            assert not warm_grade.tampered and warm_grade.scoring_error is None
        empty_app = await grade_final(tasks["fastapi"], {"files": {"app.py": ""}}, warm)
        assert empty_app.score == 0.0 and empty_app.scoring_error is None and not empty_app.tampered
    finally:
        await warm.stop()


async def test_a_rollout_container_holds_no_grader_program(backend, image):
    """The policy cannot study the graders during its rollout: they are not in its container."""
    from sandbox_env.grading.programs import GRADER_DIR, SHARED_RUNTIME, grader_paths

    names = [p.name for p in grader_paths() if p.name not in SHARED_RUNTIME]  # the clock holds no secret
    assert {"http_driver.py", "app_host.py", "report_channel.py", "pytest_runner.py"} <= set(names)
    async with backend.sandbox(image) as sb:
        for folder in ("/opt/websandbox/runtime", GRADER_DIR):
            for name in names:
                listed = await sb.exec(["ls", f"{folder}/{name}"])
                read = await sb.exec(["cat", f"{folder}/{name}"])
                assert listed.exit_code != 0 and read.exit_code != 0 and read.stdout == "", (folder, name)
        found = await sb.exec("grep -rl --include=*.py -e 'def open_channel' -e 'class Witness' / 2>/dev/null; true", timeout=120)
        assert found.stdout.strip() == "", found.stdout
