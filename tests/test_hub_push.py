"""A push to the Environments Hub carries everything the environment builds from.

`prime env push` archives the folder it runs in by its own rule (sandbox_env/cli/hub.py states it)
and keys the version by that archive's content hash; `prime env pull` and private installs build
a wheel from the archive alone. These tests do what the Hub does with a folder staged by
`websandbox stage-push`: pack it by that rule into a tar.gz, unpack it into an empty folder, build
it with `uv build --wheel` (what the push runs when uv is installed) and compare the wheel, file by
file and byte by byte, with the one built in the checkout. The content hash is computed as the
push computes it. `prime env push` itself is not run: it needs a Hub login.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from sandbox_env.cli.hub import ENV_DIR, StageError, archive_files, content_hash, stage
from sandbox_env.constants import ENV_ID, REPO_ROOT

DATA_FILTER = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python 3.11.4 and later
CONTENT_ONLY = "the same file list and bytes"


def _uv() -> str:
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(uv).exists():
        pytest.fail("uv is needed to build wheels: pip install uv (make setup installs it)")
    return uv


def _build(folder: Path, out: Path, kind: str = "--wheel") -> subprocess.CompletedProcess:
    return subprocess.run([_uv(), "build", kind, "--out-dir", str(out), str(folder)], capture_output=True, text=True, timeout=600)


def _wheel_content(out: Path) -> dict[str, bytes]:
    (wheel,) = out.glob("websandbox-*.whl")
    with zipfile.ZipFile(wheel) as z:
        return {name: z.read(name) for name in z.namelist()}


def _pack_and_unpack(folder: Path, dest: Path) -> Path:
    """What the Hub holds of a push: the archive of `folder` by the push's rule, unpacked into an empty folder."""
    archive = dest.with_suffix(".tar.gz")
    with tarfile.open(archive, "w:gz") as tar:
        for rel in archive_files(folder):
            tar.add(folder / rel, arcname=rel)
    dest.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(dest, **DATA_FILTER)
    return dest


def _tracked(*paths: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", *paths], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    return out.split()


@pytest.fixture(scope="module")
def checkout_wheel(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("checkout-wheel")
    proc = _build(ENV_DIR, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return _wheel_content(out)


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("staged") / ENV_ID
    stage(dest)
    return dest


def test_the_pushed_archive_alone_builds_the_same_wheel_as_the_checkout(checkout_wheel, staged, tmp_path):
    unpacked = _pack_and_unpack(staged, tmp_path / "from-hub")
    proc = _build(unpacked, tmp_path / "dist")
    assert proc.returncode == 0, proc.stderr[-3000:]
    pulled = _wheel_content(tmp_path / "dist")
    assert sorted(pulled) == sorted(checkout_wheel)
    differ = [name for name in checkout_wheel if pulled[name] != checkout_wheel[name]]
    assert differ == [], f"not {CONTENT_ONLY}: {differ[:10]}"
    assert "sandbox_env/images/Dockerfile" in pulled and "sandbox_env/data/tasks.jsonl" in pulled


def test_the_sdist_builds_the_same_wheel_as_the_checkout(checkout_wheel, tmp_path):
    proc = _build(ENV_DIR, tmp_path / "sdist", "--sdist")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (sdist,) = (tmp_path / "sdist").glob("websandbox-*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "unpacked", **DATA_FILTER)
    (top,) = (tmp_path / "unpacked").iterdir()
    assert (top / "images" / "Dockerfile").is_file() and (top / "sandbox_env" / "__init__.py").is_file()
    proc = _build(top, tmp_path / "dist")
    assert proc.returncode == 0, proc.stderr[-3000:]
    built = _wheel_content(tmp_path / "dist")
    assert sorted(built) == sorted(checkout_wheel)
    assert [name for name in checkout_wheel if built[name] != checkout_wheel[name]] == []


def test_the_archive_holds_every_file_of_the_package_and_the_image_sources(staged):
    held = set(archive_files(staged))
    wanted = {f for f in _tracked("sandbox_env", "images") if not Path(f).name.startswith(".")}
    assert sorted(wanted - held) == []
    assert {"README.md", "pyproject.toml", "websandbox.py", "hatch_build.py"} <= held
    for rel in wanted:
        assert (staged / rel).read_bytes() == (REPO_ROOT / rel).read_bytes(), rel


def test_a_change_anywhere_in_sandbox_env_or_images_changes_the_content_hash(staged, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(staged, copy)
    before = content_hash(copy)
    assert before == content_hash(staged)  # the hash depends on the content, not on where the folder is
    parts = {"/".join(rel.split("/")[:2]) for rel in archive_files(copy) if rel.startswith("sandbox_env/")}
    # one file of every top-level part of the package (each module, each sub-package's first file), and the image sources
    samples = [next(r for r in archive_files(copy) if r == p or r.startswith(p + "/")) for p in sorted(parts)]
    samples += ["images/Dockerfile", "images/requirements.txt"]
    assert len(samples) > 15  # the 17 top-level parts and the two image sources
    for rel in samples:
        path = copy / rel
        original = path.read_bytes()
        path.write_bytes(original + b"\n")
        assert content_hash(copy) != before, f"changing {rel} left the content hash as it was"
        path.write_bytes(original)
    assert content_hash(copy) == before
    (copy / "sandbox_env" / "families" / "new_module.py").write_text("X = 1\n")
    assert content_hash(copy) != before


def test_a_change_to_the_checkouts_package_staged_again_gives_another_hash(tmp_path):
    """End to end on a copy of the checkout: stage, change one byte of sandbox_env, stage again."""
    root = tmp_path / "checkout"
    for tree in ("sandbox_env", "images"):
        shutil.copytree(REPO_ROOT / tree, root / tree, ignore=shutil.ignore_patterns("__pycache__"))
    env_dir = root / "environments" / ENV_ID
    env_dir.mkdir(parents=True)
    for rel in archive_files(ENV_DIR):
        shutil.copy2(ENV_DIR / rel, env_dir / rel)
    stage(tmp_path / "first", env_dir, root)
    grading = root / "sandbox_env" / "grading/grader.py"
    grading.write_text(grading.read_text().replace("\n", "\n\n", 1))
    stage(tmp_path / "second", env_dir, root)
    assert content_hash(tmp_path / "first") != content_hash(tmp_path / "second")
    changed = [
        r
        for r in archive_files(tmp_path / "first")
        if (tmp_path / "first" / r).read_bytes() != (tmp_path / "second" / r).read_bytes()
    ]
    assert changed == ["sandbox_env/grading/grader.py"]


def test_the_content_hash_is_the_pushs_formula(staged):
    h = hashlib.sha256()
    for rel in sorted(archive_files(staged)):
        h.update(b"file:" + rel.encode() + (staged / rel).read_bytes())
    assert content_hash(staged) == h.hexdigest()


def test_the_checkout_environment_folder_alone_does_not_build_and_says_how_to_stage(tmp_path):
    alone = _pack_and_unpack(ENV_DIR, tmp_path / "alone")
    assert not [rel for rel in archive_files(alone) if rel.startswith(("sandbox_env/", "images/"))]
    proc = _build(alone, tmp_path / "dist")
    assert proc.returncode != 0
    assert "websandbox stage-push" in proc.stderr + proc.stdout


def test_the_push_rule_skips_hidden_files_symlinks_caches_and_build_folders(tmp_path):
    folder = tmp_path / "env"
    (folder / "pkg" / "__pycache__").mkdir(parents=True)
    (folder / "pkg" / "outputs").mkdir()
    (folder / "dist").mkdir()
    for rel in ("README.md", "pyproject.toml", "mod.py", "notes.txt", ".hidden.py", "pkg/a.py", "pkg/data.jsonl", "pkg/.env"):
        (folder / rel).write_text(rel)
    for rel in ("pkg/__pycache__/a.pyc", "pkg/outputs/run.json", "dist/x.whl"):
        (folder / rel).write_text(rel)
    (folder / "pkg" / "link.py").symlink_to(folder / "pkg" / "a.py")
    assert archive_files(folder) == ["README.md", "mod.py", "pkg/a.py", "pkg/data.jsonl", "pyproject.toml"]
    (folder / ".gitignore").write_text("notes.txt\n")
    with pytest.raises(StageError, match="gitignore"):
        archive_files(folder)


def test_staging_refuses_a_folder_that_is_not_empty_or_inside_the_environment_folder(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "old.py").write_text("")
    with pytest.raises(StageError, match="not empty"):
        stage(tmp_path / "full")
    for inside in (ENV_DIR / "outputs" / "staged-here", REPO_ROOT / "sandbox_env" / "staged-here"):
        with pytest.raises(StageError, match="which is staged: stage outside it"):
            stage(inside)
        assert not inside.exists()


def test_stage_push_on_the_command_line_stages_and_prints_the_hash(tmp_path, capsys):
    from sandbox_env.cli.main import main

    assert main(["stage-push", str(tmp_path / "push")]) == 0
    out = capsys.readouterr().out
    assert content_hash(tmp_path / "push")[:12] in out and "prime env push" in out
    assert main(["stage-push", str(tmp_path / "push")]) == 2  # not empty any more: one line, no traceback
    assert "not empty" in capsys.readouterr().err
