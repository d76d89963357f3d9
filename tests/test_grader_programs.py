"""Which runtime files the image carries and which only reach grading containers (no Docker)."""

from __future__ import annotations

from sandbox_env.constants import CONTAINER_PROGRAMS_DIR, GRADER_PROGRAMS_DIR, RUNTIME_DIR
from sandbox_env.grading.programs import (
    GRADER_DIR,
    SHARED_RUNTIME,
    grader_argv,
    grader_files,
    grader_paths,
    image_runtime_files,
)
from sandbox_env.rollout.image import image_hash


def test_every_runtime_file_is_either_in_the_image_or_a_grader_program_only_shared_modules_are_both():
    image = set(image_runtime_files())
    graders = set(grader_paths())
    every = {p for p in RUNTIME_DIR.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert image & graders == {CONTAINER_PROGRAMS_DIR / name for name in SHARED_RUNTIME} == {CONTAINER_PROGRAMS_DIR / "clock.py"}
    assert image | graders == every


def test_the_image_carries_exactly_the_container_folder_and_graders_come_from_the_grader_folder():
    assert all(p.is_relative_to(CONTAINER_PROGRAMS_DIR) for p in image_runtime_files())
    shared = {CONTAINER_PROGRAMS_DIR / name for name in SHARED_RUNTIME}
    assert all(p.parent == GRADER_PROGRAMS_DIR for p in set(grader_paths()) - shared)


def test_the_image_tag_names_each_file_by_its_place_in_the_image_not_in_the_package():
    from sandbox_env.rollout.image import _build_inputs, _hashed_name

    names = {_hashed_name(p) for p in _build_inputs()}
    in_image = "sandbox_env/runtime/"  # where /opt/websandbox/runtime's files are named, whatever folder holds them
    assert {in_image + "agent.py", in_image + "orm_fixture/data.py"} <= names
    assert not [n for n in names if "/container/" in n]


def test_the_image_carries_what_rollouts_need_and_no_grader():
    names = {p.name for p in image_runtime_files()}
    assert {"agent.py", "session.py", "prepare_image.py", "settings.py"} <= names
    assert not names & {
        "http_driver.py",
        "app_host.py",
        "report_channel.py",
        "pytest_runner.py",
        "pytest_report_plugin.py",
        "process_guard.py",
    }


def test_grader_programs_go_under_the_grader_folder_and_unknown_ones_are_refused():
    files = grader_files()
    assert f"{GRADER_DIR}/http_driver.py" in files and all(p.startswith(GRADER_DIR + "/") for p in files)
    assert grader_argv("/py", "http_driver.py") == ["/py", "-E", "-s", f"{GRADER_DIR}/http_driver.py"]
    try:
        grader_argv("/py", "agent.py")
    except ValueError as exc:
        assert "not a grader program" in str(exc)
    else:
        raise AssertionError("agent.py was accepted as a grader program")


def test_the_image_hash_does_not_depend_on_grader_programs(monkeypatch):
    before = image_hash()
    driver = GRADER_PROGRAMS_DIR / "http_driver.py"
    real_read = type(driver).read_bytes

    def read_bytes(path):
        data = real_read(path)
        return data + b"\n# changed\n" if path == driver else data

    monkeypatch.setattr(type(driver), "read_bytes", read_bytes)
    assert image_hash() == before
