"""A self-contained folder for `prime env push`, and the rule that push collects its files by.

`prime env push` uploads the wheel it builds in the environment folder and a source archive of
that folder; `prime env pull` and private installs build a wheel from the archive alone, and the
Hub refuses an archive whose content hash it already holds. In the checkout the environment
folder (`environments/websandbox/`) holds only the module, its pyproject, README and build hook:
the code (`sandbox_env/`) and the image sources (`images/`) live at the checkout's top. Pushed
from there, the archive could not build (no `sandbox_env` beside it) and its hash would cover
those four files only, so a change to `sandbox_env` alone would be refused as existing.

Decision: push from a staged folder, never from the checkout's environment folder. `stage(DIR)`
(`websandbox stage-push DIR`, `make stage-push DIR=...`) copies the environment folder's files,
`sandbox_env/` and `images/` into an empty DIR by the push's own rule; the build hook takes both
from there, so DIR builds the same wheel as the checkout (tests/test_hub_push.py builds both and
compares them) and its content hash covers every file of the package. No second copy of
`sandbox_env` is kept in git: DIR is made fresh for each push, outside the checkout or ignored.

The rule (prime CLI, `packages/prime/src/prime_cli/commands/env.py`: `_collect_archive_files`,
`should_include_*_in_archive`, `compute_content_hash`; read at prime's commit 66fb4b7, August
2026): `README.md`, `pyproject.toml` and `*.py` at the folder's top, and every file of every
sub-folder, skipping symlinks, names starting with `.`, `__pycache__`, `dist`, `build`,
`outputs` and `*.egg-info` folders, and what a `.gitignore` at the top ignores. The hash is
sha256 over, per file in order of its relative path, `file:<path>` then its bytes. A staged
folder has no `.gitignore`, so this module refuses to judge a folder that has one rather than
model gitignore matching.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from sandbox_env.constants import ENV_ID, REPO_ROOT
from sandbox_env.stages.compile import compile_all, write_dataset

ENV_DIR = REPO_ROOT / "environments" / ENV_ID
TOP_PATTERNS = ("README.md", "pyproject.toml", "*.py")
SKIPPED_DIRS = {"dist", "__pycache__", "build", "outputs"}
DATASET = "sandbox_env/data/tasks.jsonl"  # compiled into the staged folder, never copied from the checkout
STAGED_TREES = ("sandbox_env", "images")  # beside the module in the staged folder, as at the checkout's top


class StageError(RuntimeError):
    pass


def _file_kept(path: Path) -> bool:
    return path.is_file() and not path.is_symlink() and not path.name.startswith(".") and "__pycache__" not in path.parts


def _dir_kept(path: Path) -> bool:
    name = path.name
    return path.is_dir() and not name.startswith(".") and name not in SKIPPED_DIRS and not name.endswith(".egg-info")


def _walk(sub: Path) -> list[Path]:
    """Every file the push keeps under the sub-folder `sub` (the sub-folder itself kept)."""
    if not _dir_kept(sub):
        return []
    out = []
    for root, dirnames, filenames in os.walk(sub):
        dirnames[:] = sorted(d for d in dirnames if _dir_kept(Path(root) / d))
        out += [Path(root) / name for name in sorted(filenames) if _file_kept(Path(root) / name)]
    return out


def archive_files(folder: Path) -> list[str]:
    """The relative paths `prime env push` puts into the source archive of `folder`, in its order."""
    folder = Path(folder)
    if (folder / ".gitignore").exists():
        raise StageError(f"{folder} has a .gitignore, which the push honours and this rule does not model: stage instead")
    found = {path for pattern in TOP_PATTERNS for path in folder.glob(pattern) if _file_kept(path)}
    for sub in folder.iterdir():
        found.update(_walk(sub))
    return sorted(path.relative_to(folder).as_posix() for path in found)


def content_hash(folder: Path) -> str:
    """The content hash the Hub keys a pushed version by."""
    h = hashlib.sha256()
    for rel in archive_files(folder):
        h.update(f"file:{rel}".encode())
        h.update((Path(folder) / rel).read_bytes())
    return h.hexdigest()


def stage(dest: Path, env_dir: Path = ENV_DIR, root: Path = REPO_ROOT) -> list[str]:
    """Copy what a push of the environment needs into the empty folder `dest`; the archive's files."""
    dest = Path(dest)
    if not (env_dir / "pyproject.toml").is_file() or not (root / "sandbox_env").is_dir():
        raise StageError(f"no environment folder at {env_dir}: stage-push works from a checkout of websandbox")
    if dest.exists() and any(dest.iterdir()):
        raise StageError(f"{dest} is not empty: give a new or empty folder (a push takes every file under it)")
    for inside in (env_dir, *(root / tree for tree in STAGED_TREES)):
        if dest.resolve() == inside.resolve() or inside.resolve() in dest.resolve().parents:
            raise StageError(f"{dest} is inside {inside}, which is staged: stage outside it")
    dest.mkdir(parents=True, exist_ok=True)
    copies = [(env_dir / rel, dest / rel) for rel in archive_files(env_dir)]
    for tree in STAGED_TREES:
        if (env_dir / tree).exists():
            raise StageError(f"{env_dir / tree} exists: remove it, the checkout keeps {tree} at its top only")
        copies += [(path, dest / tree / path.relative_to(root / tree)) for path in _walk(root / tree)]
    for src, dst in copies:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    write_dataset(compile_all(), dest / DATASET)  # built, not stored: the archive carries the sources' own dataset
    return archive_files(dest)
