"""bench/floors.py: a floor job's script reaches bash whole, however long it is.

The grader programs and a request together passed 128 KiB, the most the kernel takes in one
argument (MAX_ARG_STRLEN), so the fastapi and django floors failed to start at all.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import floors  # noqa: E402

MAX_ARG_STRLEN = 128 * 1024


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def test_a_short_script_is_one_argument():
    argv = floors._bash("echo one", "", "echo two")
    assert argv == ["/bin/bash", "-c", "echo one\necho two"]
    assert _run(argv) == "one\ntwo\n"


def test_a_script_past_one_arguments_limit_runs_whole_with_every_argument_under_it(tmp_path):
    text = "".join(f"line {i} with 'quotes', \"doubles\", $dollars and \\backslashes\n" for i in range(6000))
    target = tmp_path / "big.txt"
    script = floors._bash(floors.write_files({str(target): text}), f"wc -c < {target}")
    assert len("\n".join(script[2:]).encode()) > MAX_ARG_STRLEN
    assert all(len(a.encode()) < MAX_ARG_STRLEN for a in script)
    assert int(_run(script)) == len(text.encode())
    assert target.read_text() == text
