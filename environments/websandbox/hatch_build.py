"""Build hook: the environment's wheel carries everything the environment runs with.

The module verifiers loads (`websandbox.py`) lives in this folder; the code it runs,
`sandbox_env` (families, graders, the sandbox backend, the task data, `images/`), lives
at the checkout's root, shared with the checkout's tools. A wheel built here installs:

    websandbox/__init__.py      this folder's websandbox.py
    websandbox/pyproject.toml   beside it, where vf-eval 0.3.1 looks for [tool.verifiers.eval]
    websandbox/README.md
    sandbox_env/...             every file of the package but caches

Decisions: the module goes into a `websandbox/` package so its pyproject.toml sits beside it
in a folder of its own (a top-level module would put it at the root of site-packages, where
every environment built from verifiers' template writes its own). `sandbox_env` is taken from
this folder when present (building from the sdist, which carries it) and from the checkout
otherwise; a build that finds neither, or a package without its image sources or task data,
fails instead of making a wheel that cannot build its image. An editable install takes
nothing from here: `dev-mode-dirs` puts this folder and the checkout root on sys.path.
"""

from __future__ import annotations

from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BESIDE_THE_MODULE = {"websandbox.py": "__init__.py", "pyproject.toml": "pyproject.toml", "README.md": "README.md"}
REQUIRED = ("images/Dockerfile", "images/requirements.txt", "data/tasks.jsonl", "runtime/agent.py")


def package_source(root: Path) -> Path:
    for candidate in (root / "sandbox_env", root.parent.parent / "sandbox_env"):
        if candidate.is_dir():
            missing = [f for f in REQUIRED if not (candidate / f).is_file()]
            if missing:
                raise RuntimeError(f"{candidate} lacks {', '.join(missing)}: run `python build_tasks.py` in the checkout first")
            return candidate
    raise RuntimeError(f"no sandbox_env beside {root} or at the checkout root: build from a checkout or from the sdist")


def package_files(src: Path) -> dict[str, str]:
    """Every file of the package by its place in the archive, caches left out."""
    return {
        str(path): "sandbox_env/" + path.relative_to(src).as_posix()
        for path in sorted(src.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo")
    }


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name == "wheel" and version == "editable":
            return
        root = Path(self.root)
        build_data["force_include"].update(package_files(package_source(root)))
        if self.target_name == "wheel":
            for name, dest in BESIDE_THE_MODULE.items():
                build_data["force_include"][str(root / name)] = f"websandbox/{dest}"
