"""Which stack websandbox runs on is read from the APIs the installed verifiers offers, never its version.

Each case lays out a verifiers package of one kind (v1 only as 0.4.x, both as the 0.3.1
release and prime-rl's pinned build, classic only as older 0.3.x) in a folder of its own
and asks in a fresh interpreter that finds that one first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_env.constants import REPO_ROOT

PROBE = (
    "import json\n"
    "from sandbox_env.doors.stack import installed_stack, offered_doors\n"
    "try:\n"
    "    print(json.dumps([installed_stack(), sorted(offered_doors())]))\n"
    "except ValueError as exc:\n"
    "    print(json.dumps(['error', str(exc)]))\n"
)


def _ask(tmp_path: Path, packages: list[str], chosen: str | None = None) -> list:
    root = tmp_path / "site"
    for name in ["", *packages]:
        folder = root / "verifiers" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    env = {k: v for k, v in os.environ.items() if k != "WEBSANDBOX_STACK"}
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(REPO_ROOT)])
    if chosen is not None:
        env["WEBSANDBOX_STACK"] = chosen
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize(
    ("packages", "stack", "doors"),
    [
        (["v1"], "v1", ["v1"]),  # 0.4.x
        (["v1", "legacy"], "v1", ["classic", "v1"]),  # 0.3.1, and prime-rl's build whatever its version says
        (["envs"], "classic", ["classic"]),  # older 0.3.x
    ],
)
def test_the_stack_follows_the_apis_the_build_offers(tmp_path, packages, stack, doors):
    assert _ask(tmp_path, packages) == [stack, doors]


def test_websandbox_stack_picks_one_door_of_a_build_that_has_both(tmp_path):
    assert _ask(tmp_path, ["v1", "legacy"], "classic") == ["classic", ["classic"]]
    assert _ask(tmp_path, ["v1", "legacy"], "v1") == ["v1", ["v1"]]


def test_a_stack_the_build_lacks_or_an_unknown_name_is_refused_with_what_to_set(tmp_path):
    kind, message = _ask(tmp_path, ["v1"], "classic")
    assert kind == "error" and "has no classic API" in message
    kind, message = _ask(tmp_path, ["v1"], "v2")
    assert kind == "error" and "the stacks are 'v1' and 'classic'" in message
