"""Reading a saved run, whatever wrote it: `load_run` asks each known loader in turn.

vf-eval 0.3.x runs (`results.jsonl` + `metadata.json`) are read by
`classic.ClassicLoader`, verifiers 0.4.x runs (`traces.jsonl`, `configs/`) by
`v1.V1Loader`; another format implements `record.Loader` and is appended to LOADERS.
The first loader whose `detect` says yes reads the run.
"""

from __future__ import annotations

from pathlib import Path

from sandbox_env.viewer.classic import ClassicLoader
from sandbox_env.viewer.record import Loader, Run, RunFormatError
from sandbox_env.viewer.v1 import V1Loader

LOADERS: list[Loader] = [ClassicLoader(), V1Loader()]


def load_run(path: Path) -> Run:
    """Read the run in `path` with the first loader that recognises it."""
    path = Path(path)
    if not path.is_dir():
        raise RunFormatError(f"{path} is not a directory: give the folder of one run (it holds results.jsonl or traces.jsonl)")
    for loader in LOADERS:
        if loader.detect(path):
            return loader.read(path)
    known = ", ".join(loader.name for loader in LOADERS)
    raise RunFormatError(
        f"{path} holds no run this viewer can read (known formats: {known}); "
        "a vf-eval run folder holds results.jsonl and metadata.json (verifiers 0.3.x) or traces.jsonl and configs/ (0.4.x)"
    )
