"""Build hook: the environment's wheel carries everything the environment runs with.

The module verifiers loads (`websandbox.py`) lives in this folder; the code it runs,
`sandbox_env` (families, graders, the sandbox backend, the task data), and the image
sources, `images/` (the Dockerfile and its pinned requirements), live at the checkout's
root, shared with the checkout's tools. A wheel built here installs:

    websandbox/__init__.py      this folder's websandbox.py
    websandbox/pyproject.toml   beside it, where vf-eval 0.3.1 looks for [tool.verifiers.eval]
    websandbox/README.md
    sandbox_env/...             every file of the package but caches
    sandbox_env/images/...      the image sources, where the installed package looks for them

Decisions: the module goes into a `websandbox/` package so its pyproject.toml sits beside it
in a folder of its own (a top-level module would put it at the root of site-packages, where
every environment built from verifiers' template writes its own). `sandbox_env` and `images`
are taken from this folder when it holds them (a folder staged for `prime env push` by
`websandbox stage-push`, or the sdist, which carries both at its top) and from the checkout
otherwise, so the same sources give the same wheel wherever it is built. A build that finds
neither, or a package without its image sources or task data, fails instead of making a
wheel that cannot build its image. An editable install takes nothing from here:
`dev-mode-dirs` puts this folder and the checkout root on sys.path.

Which files count follows the rule `prime env push` collects its source archive by (skip
hidden names, symlinks, caches and `build`/`dist`/`outputs` folders; sandbox_env/cli/hub.py
states it), so a folder staged by that rule and the checkout build the same wheel.

The compiled dataset (`sandbox_env/data/tasks.jsonl`) is built, not stored: git does not
track it, and this hook compiles it from the task sources and the verified stores into the
build's temporary folder (`compiled_dataset`, with the build's own interpreter: compiling
needs only the standard library, about a second) and puts that file in the archive, so a
wheel or an sdist always carries the dataset of the sources it was built from, whatever
copy the folder holds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BESIDE_THE_MODULE = {"websandbox.py": "__init__.py", "pyproject.toml": "pyproject.toml", "README.md": "README.md"}
REQUIRED = (
    "images/Dockerfile",
    "images/requirements.txt",
    "sandbox_env/tasks",
    "sandbox_env/runtime/container/agent.py",
)
DATASET = "sandbox_env/data/tasks.jsonl"
COMPILE = (
    "import sys; from pathlib import Path; from sandbox_env.stages.compile import compile_all, write_dataset; "
    "write_dataset(compile_all(), Path(sys.argv[1]))"
)


def compiled_dataset(src: Path, out_dir: Path) -> Path:
    """The dataset compiled from the sources under `src` into `out_dir` (what `python build_tasks.py` writes)."""
    out = out_dir / "tasks.jsonl"
    subprocess.run([sys.executable, "-c", COMPILE, str(out)], cwd=src, check=True)
    return out


SKIPPED_DIRS = {"__pycache__", "build", "dist", "outputs"}


def source_root(root: Path) -> Path:
    """The folder holding `sandbox_env/` and `images/`: this one when staged or unpacked from the sdist, else the checkout."""
    for candidate in (root, root.parent.parent):
        if (candidate / "sandbox_env").is_dir():
            missing = [f for f in REQUIRED if not (candidate / f).exists()]
            if missing:
                raise RuntimeError(
                    f"{candidate} lacks {', '.join(missing)}: build from a complete checkout, "
                    "or stage again with `websandbox stage-push DIR`"
                )
            return candidate
    raise RuntimeError(
        f"no sandbox_env beside {root} or at the checkout root: build from a checkout, from the sdist, "
        "or from a folder staged by `websandbox stage-push DIR`"
    )


def kept(path: Path, top: Path) -> bool:
    rel = path.relative_to(top)
    return (
        path.is_file()
        and not path.is_symlink()
        and not any(part.startswith(".") or part in SKIPPED_DIRS or part.endswith(".egg-info") for part in rel.parts)
        and path.suffix not in (".pyc", ".pyo")
    )


def tree_files(top: Path, prefix: str) -> dict[str, str]:
    """Every kept file under `top` by its place in the archive (`prefix` + its path under `top`)."""
    return {str(path): prefix + path.relative_to(top).as_posix() for path in sorted(top.rglob("*")) if kept(path, top)}


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name == "wheel" and version == "editable":
            return
        root = Path(self.root)
        if self.metadata.name != "websandbox":  # the checkout's own distribution: its files are its own, the dataset is built
            self._scratch = Path(tempfile.mkdtemp(prefix="websandbox-dataset-"))
            build_data["force_include"][str(compiled_dataset(root, self._scratch))] = DATASET
            return
        src = source_root(root)
        files = tree_files(src / "sandbox_env", "sandbox_env/")
        files = {path: name for path, name in files.items() if name != DATASET}  # built below, never a stored copy
        self._scratch = Path(tempfile.mkdtemp(prefix="websandbox-dataset-"))
        files[str(compiled_dataset(src, self._scratch))] = DATASET
        build_data["force_include"].update(files)
        if self.target_name == "wheel":
            build_data["force_include"].update(tree_files(src / "images", "sandbox_env/images/"))
            for name, dest in BESIDE_THE_MODULE.items():
                build_data["force_include"][str(root / name)] = f"websandbox/{dest}"
        else:  # the sdist keeps the checkout's layout, so a wheel built from it finds both at its top
            build_data["force_include"].update(tree_files(src / "images", "images/"))

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
