"""Every file the docs cite exists: a path by its place in the checkout, a bare name somewhere in it.

The docs name files in three ways: a path from the checkout's top (`sandbox_env/rollout/core.py`),
a path inside a part that its section names (`docker/host_tree.py`, `cli/eval_report.py`), and a
bare name in a table of one folder (`core.py`). The first must exist where it says, the second
must be the end of some tracked path, the third some tracked file's name. Paths inside a
container (`/workspace/app.py`) and the files a run saves are not files of the checkout.
"""

from __future__ import annotations

import re
import subprocess

from sandbox_env.constants import REPO_ROOT

DOCS = ["README.md", "environments/websandbox/README.md", "docs/architecture.md", "docs/multi-host.md", "docs/tasks.md"]
CITED = re.compile(r"`([A-Za-z0-9_][A-Za-z0-9_./-]*\.(?:py|md|toml|jsonl?|txt|png|html|sh))`")
NOT_OF_THE_CHECKOUT = {
    "results.jsonl",  # what a classic run saves
    "metadata.json",
    "traces.jsonl",  # what a v1 run saves
    "report.html",  # what the viewer writes
    "expected.json",  # a hand-written orm task's files, named by the folder layout they describe
    "fixture_variants.json",
    "sitecustomize.py",  # what a submission might plant
    "conftest.py",
    "app.py",  # a fastapi task's deliverable, /workspace/app.py
    "websandbox/__init__.py",  # the environment module's place in the wheel (environments/websandbox/hatch_build.py)
}
PLACEHOLDERS = ("RUN/", "BASELINE/")  # a run's folder, as the docs write it


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    return out.split()


def _exists(cited: str, tracked: list[str], names: set[str]) -> bool:
    if cited in NOT_OF_THE_CHECKOUT or cited.startswith(PLACEHOLDERS) or (REPO_ROOT / cited).exists():
        return True
    if "/" not in cited:
        return cited in names
    return any(path.endswith("/" + cited) for path in tracked)


def test_every_file_the_docs_cite_exists():
    tracked = _tracked()
    names = {path.rsplit("/", 1)[-1] for path in tracked}
    missing = [
        f"{doc}: {cited}"
        for doc in DOCS
        for cited in CITED.findall((REPO_ROOT / doc).read_text())
        if not _exists(cited, tracked, names)
    ]
    assert not missing, "cited but not in the checkout:\n" + "\n".join(missing)


def test_every_doc_the_docs_list_is_read_here():
    assert all((REPO_ROOT / doc).is_file() for doc in DOCS)
    assert {p.name for p in (REPO_ROOT / "docs").glob("*.md")} <= {d.rsplit("/", 1)[-1] for d in DOCS}
