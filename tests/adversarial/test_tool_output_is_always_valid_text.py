"""Whatever a program prints, both tools and the final read return valid text.

Before: `print('\\udcff')` in execute_code came back as a lone surrogate and aborted the
rollout at the next request to the model ("surrogates not allowed"), filed as a model
error. Now every string from the agent is made valid on the host (U+FFFD in place of
what cannot be encoded), and the tools apply the same rule to what they return.
"""

from __future__ import annotations

import pytest

from sandbox_env.rollout.tools import run_bash, run_code
from sandbox_env.text import valid_json_text, valid_text


def _encodes(text: str) -> bool:
    text.encode("utf-8")
    return True


@pytest.mark.docker
async def test_lone_surrogates_and_invalid_bytes_come_back_as_valid_text(session):
    outputs = [
        await run_code(session, "print('\\udcff')", timeout=10),
        await run_code(session, "print('a\\ud800b', '\\ud83d\\ude00')", timeout=10),
        await run_code(session, "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\n'); sys.stdout.flush()", 10),
        await run_code(session, "import os; os.write(1, b'\\xed\\xb3\\xbf\\n')", timeout=10),
        await run_code(session, "raise ValueError('\\udcff')", timeout=10),
        await run_bash(session, "printf '\\xff\\xed\\xb3\\xbf\\n'; printf '\\xfe' >&2", timeout=10),
        await run_bash(session, "python -c \"print('\\udcff')\"", timeout=10),
    ]
    assert all(_encodes(out) for out in outputs)
    assert "\ufffd" in outputs[0] and outputs[1] == "a\ufffdb 😀"


@pytest.mark.docker
async def test_the_final_read_of_a_string_with_a_lone_surrogate_is_valid_text(session):
    await run_code(session, "result = [('\\udcff', 'ok')]", timeout=10)
    value = await session.probe("result")
    assert value == {"list": [{"tuple": ["\ufffd", "ok"]}]}


def test_valid_text_keeps_valid_strings_and_joins_split_pairs():
    assert valid_text("plain é 😀") == "plain é 😀"
    assert valid_text("\ud83d\ude00") == "😀"
    assert valid_text("x\udcffy") == "x\ufffdy"
    assert valid_json_text({"k\udcff": ["\ud800", 1, None]}) == {"k\ufffd": ["\ufffd", 1, None]}
