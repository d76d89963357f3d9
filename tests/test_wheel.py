"""The environment package works away from this checkout: built as a wheel, installed into a fresh
venv in a temporary folder, it finds its image and scores 1.0 on one task of each family through
vf-eval with the reference policy, saving its run in the folder it ran in.

Everything runs as a user would: `uv build`, `uv venv`, `uv pip install` of the wheel with the
verifiers this checkout pins, then the installed `websandbox` command with no PYTHONPATH and the
temporary folder as the working directory. Dependencies come from uv's cache or the index. The
install needs no Docker engine; the vf-eval run does (marked `docker`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_env.constants import ENV_ID, REPO_ROOT
from sandbox_env.dataset import load_rows
from sandbox_env.rollout.image import image_tag
from sandbox_env.sandbox.docker import leaked_containers
from tests.wheel_kit import run_shown, uv_path

VERIFIERS = "verifiers==0.3.1"


def _one_task_per_family() -> list[str]:
    first: dict[str, str] = {}
    for row in load_rows():
        first.setdefault(row["info"]["family"], row["info"]["task_id"])
    first.pop("smoke", None)
    return sorted(first.values())


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(venv, working folder): the wheel built from this checkout, installed outside it."""
    root = tmp_path_factory.mktemp("wheel")
    assert REPO_ROOT not in root.parents, "the venv must live outside the checkout"
    uv = uv_path()
    run_shown([uv, "build", "--wheel", "--out-dir", str(root / "dist"), str(REPO_ROOT / "environments" / ENV_ID)], root)
    (wheel,) = (root / "dist").glob("websandbox-*.whl")
    venv = root / "venv"
    run_shown([uv, "venv", "--python", sys.executable, str(venv)], root)
    run_shown([uv, "pip", "install", "--python", str(venv / "bin" / "python"), str(wheel), VERIFIERS], root)
    work = root / "work"
    work.mkdir()
    return venv, work


def test_the_wheel_holds_the_module_with_its_pyproject_and_the_package_without_caches(installed):
    import zipfile

    (wheel,) = (installed[0].parent / "dist").glob("websandbox-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "websandbox/__init__.py",
        "websandbox/pyproject.toml",
        "sandbox_env/images/Dockerfile",
        "sandbox_env/images/requirements.txt",
        "sandbox_env/data/tasks.jsonl",
        "sandbox_env/runtime/container/agent.py",
    } <= names
    tracked = subprocess.run(["git", "ls-files", "sandbox_env"], cwd=REPO_ROOT, capture_output=True, text=True).stdout.split()
    assert set(tracked) <= names  # every file of the package in the checkout
    with zipfile.ZipFile(wheel) as z:  # the image sources from the checkout's top, byte for byte
        for name in ("Dockerfile", "requirements.txt"):
            assert z.read(f"sandbox_env/images/{name}") == (REPO_ROOT / "images" / name).read_bytes()
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if n.split("/")[0] not in ("websandbox", "sandbox_env", "websandbox-0.1.0.dist-info")]


def test_the_checkouts_own_wheel_carries_the_image_sources_in_the_package(tmp_path):
    import zipfile

    run_shown([uv_path(), "build", "--wheel", "--out-dir", str(tmp_path), str(REPO_ROOT)], tmp_path)
    (wheel,) = tmp_path.glob("websandbox_dev-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert z.read("sandbox_env/images/Dockerfile") == (REPO_ROOT / "images" / "Dockerfile").read_bytes()
    assert {
        "sandbox_env/images/requirements.txt",
        "sandbox_env/data/tasks.jsonl",
        "sandbox_env/runtime/container/agent.py",
    } <= names
    assert not [n for n in names if n.startswith(("images/", "tests/", "bench/", "environments/"))]


def test_the_image_sources_sit_at_the_checkouts_top_and_hash_under_their_checkout_names():
    from sandbox_env.constants import IMAGES_DIR
    from sandbox_env.rollout.image import _build_inputs, _hashed_name

    assert IMAGES_DIR == REPO_ROOT / "images" and (IMAGES_DIR / "Dockerfile").is_file()
    assert not (REPO_ROOT / "sandbox_env" / "images").exists()
    names = [_hashed_name(p) for p in _build_inputs()]
    assert names[:2] == ["images/Dockerfile", "images/requirements.txt"]
    assert all(n.startswith("sandbox_env/runtime/") for n in names[2:]) and len(names) > 2


def _user_env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", "VIRTUAL_ENV": str(venv)}


def test_the_installed_package_carries_its_code_images_data_and_eval_defaults(installed):
    venv, work = installed
    probe = (
        "import json, sandbox_env, websandbox\n"
        "from sandbox_env.constants import IMAGES_DIR, DATA_FILE\n"
        "from sandbox_env.rollout.image import image_tag\n"
        "from verifiers.legacy.scripts.eval import get_env_eval_defaults\n"
        "print(json.dumps({'sandbox_env': sandbox_env.__file__, 'websandbox': websandbox.__file__,\n"
        "  'dockerfile': (IMAGES_DIR / 'Dockerfile').is_file(), 'data': DATA_FILE.is_file(), 'images': str(IMAGES_DIR),\n"
        "  'tag': image_tag(), 'defaults': get_env_eval_defaults('websandbox')}))\n"
    )
    out = run_shown([str(venv / "bin" / "python"), "-c", probe], work, _user_env(venv)).stdout
    found = json.loads(out.strip().splitlines()[-1])
    site = str(venv / "lib")
    assert found["sandbox_env"].startswith(site) and found["websandbox"].startswith(site)
    assert found["dockerfile"] and found["data"]
    assert found["images"].startswith(site)  # the wheel's copy, not a checkout's
    assert found["tag"] == image_tag()  # the same sources, so the same image as this checkout's
    assert found["defaults"] == {"num_examples": -1, "rollouts_per_example": 1}


@pytest.mark.docker
def test_the_installed_package_scores_one_on_a_task_of_each_family_through_vf_eval(installed, image):
    venv, work = installed
    env = _user_env(venv)
    built = run_shown([str(venv / "bin" / "websandbox"), "build-image"], work, env)
    assert image in built.stdout  # found, not rebuilt: the checkout's image for the same sources
    tasks = _one_task_per_family()
    cmd = [str(venv / "bin" / "websandbox"), "eval", "-a", json.dumps({"task_ids": tasks}), "-c", "3"]
    proc = run_shown(cmd, work, env, timeout=1800)
    assert "eval_dataset is not set" not in proc.stdout + proc.stderr
    (run,) = (work / "outputs" / "evals" / f"{ENV_ID}--reference").iterdir()  # in the folder it ran in
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]
    scores = {r["info"]["task_id"]: r["reward"] for r in rows}
    print(json.dumps(scores))
    assert scores == dict.fromkeys(tasks, 1.0)
    assert not any((venv / "lib").rglob("outputs/evals")), "a run was saved inside site-packages"
    assert leaked_containers() == []


def test_the_compiled_dataset_is_built_not_stored_and_every_wheel_carries_the_one_its_sources_compile_to(tmp_path):
    """git does not track sandbox_env/data/tasks.jsonl; the wheels' build hook compiles it from a tree without one."""
    import hashlib
    import zipfile

    from sandbox_env.stages.compile import compile_all, write_dataset

    tracked = subprocess.run(["git", "ls-files", "sandbox_env/data"], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert "sandbox_env/data/tasks.jsonl" not in tracked.stdout.split()
    tree = tmp_path / "tree"  # the tracked files only, as a fresh clone has them
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, (f.decode() for f in files)):
        if (REPO_ROOT / rel).is_file():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_bytes((REPO_ROOT / rel).read_bytes())
    assert not (tree / "sandbox_env" / "data" / "tasks.jsonl").exists()
    expected = tmp_path / "tasks.jsonl"
    write_dataset(compile_all(), expected)
    for source, pattern in ((tree / "environments" / ENV_ID, "websandbox-*.whl"), (tree, "websandbox_dev-*.whl")):
        run_shown([uv_path(), "build", "--wheel", "--out-dir", str(tmp_path / "dist"), str(source)], tmp_path)
        (wheel,) = (tmp_path / "dist").glob(pattern)
        built = zipfile.ZipFile(wheel).read("sandbox_env/data/tasks.jsonl")
        assert hashlib.sha256(built).hexdigest() == hashlib.sha256(expected.read_bytes()).hexdigest(), wheel.name
