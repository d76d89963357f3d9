"""The Python session's private reply pipe: junk written into it breaks at most that session.

The attack: a cell writes a JSON line to the session's reply fd (fd 4), so that every
later cell and the final read would get an earlier cell's reply. The defence: each request
to the session carries a fresh random id; anything else on the pipe is dropped and counted,
the model is told, the session restarts (with its preamble), and later replies are
never shifted.
"""

from __future__ import annotations

import pytest

from sandbox_env.rollout.tools import run_bash, run_code

pytestmark = pytest.mark.docker

RESTARTED = "the session was restarted and the namespace was lost"


async def _in_step(sb) -> None:
    """Later cells get their own replies, and the final read gets the real value."""
    for i in range(3):
        assert await run_code(sb, f"print('cell {i}')", timeout=10) == f"cell {i}"
    await run_code(sb, "result = [('real',)]", timeout=10)
    assert await sb.probe("result") == {"list": [{"tuple": ["real"]}]}


async def test_a_forged_reply_written_to_the_reply_fd_restarts_the_session_and_says_so(session):
    await run_code(session, "kept = 1", timeout=10)
    out = await run_code(
        session, 'import os\nos.write(4, b\'{"output": "SHIFTED", "value": {"list": []}}\\n\')\nprint(\'mine\')', 10
    )
    assert RESTARTED in out and out.endswith("mine") and "SHIFTED" not in out
    assert "NameError" in await run_code(session, "kept", timeout=10)
    await _in_step(session)


async def test_a_reply_guessed_from_the_cells_own_request_is_still_only_its_own(session):
    """A cell can read its own request id from its frames; it can fake only its own reply."""
    code = (
        "import sys, json\n"
        "f = sys._getframe()\n"
        "while f and 'req' not in f.f_locals: f = f.f_back\n"
        "rid = f.f_locals['req']['id']\n"
        "import os\nos.write(4, json.dumps({'id': rid, 'output': 'FORGED'}).encode() + b'\\n')\n"
    )
    out = await run_code(session, code, timeout=10)
    assert "FORGED" in out  # the cell said what its own output is: that is all it can do
    # the session's real reply to that cell is now an extra line: the next cell reports it
    nxt = await run_code(session, "print('next')", timeout=10)
    assert nxt.endswith("next") and RESTARTED in nxt
    await _in_step(session)


async def test_a_flood_without_a_newline_on_the_reply_fd_leaves_the_agent_small(session, agent_pid):
    code = "import os\nchunk = b'x' * (1 << 20)\nfor _ in range(100): os.write(4, chunk)\nprint('flooded')"
    out = await run_code(session, code, timeout=60)
    assert RESTARTED in out and "reply to this cell was destroyed" in out  # the reply was glued to the junk
    rss = await run_bash(session, f"grep VmHWM /proc/{agent_pid}/status", timeout=10)
    assert int(rss.split()[1]) < 64 * 1024, rss  # kB: the agent read at most one 8 MiB line at a time
    await _in_step(session)


async def test_junk_written_by_a_shell_command_into_the_session_is_reported_at_the_next_cell(session):
    await run_code(session, "import os; print(os.getpid())", timeout=10)
    pid = (await run_code(session, "os.getpid()", timeout=10)).strip()
    out = await run_bash(session, f'printf \'junk\\n{{"output": "SHIFTED"}}\\n\' > /proc/{pid}/fd/4', timeout=10)
    assert out == "(no output)"
    nxt = await run_code(session, "print('next')", timeout=10)
    assert RESTARTED in nxt and "SHIFTED" not in nxt
    await _in_step(session)


async def test_requests_injected_into_the_sessions_own_input_restart_it(session):
    code = (
        "import os\nfd = os.open('/proc/self/fd/3', os.O_WRONLY)\n"
        'os.write(fd, b\'{"op": "exec", "code": "print(1)", "id": "x"}\\nnot json\\n\')\nprint(\'injected\')'
    )
    out = await run_code(session, code, timeout=10)
    nxt = await run_code(session, "print('next')", timeout=10)
    assert RESTARTED in out + nxt
    await _in_step(session)


async def test_the_preamble_runs_again_when_junk_restarts_the_session(sandbox):
    await sandbox.start_python(preamble="from_preamble = 42")
    await run_code(sandbox, "import os; os.write(4, b'junk\\n')", timeout=10)
    assert await run_code(sandbox, "from_preamble", timeout=10) == "42"


PATCH_PROBE_REPLY = """
import gc, json
_session = next(o for o in gc.get_objects() if type(o).__name__ == "Session" and hasattr(o, "_encode"))
_plain = _session._encode
def _hostile(reply, rid):
    if "value" not in reply:
        return _plain(reply, rid)
    return {body}
_session._encode = _hostile
"""


async def test_a_session_value_too_large_to_relay_reads_as_too_large_not_as_a_harness_fault(session):
    """8 MB of raw UTF-8 on the reply pipe relays as 24 MB of JSON escapes: the agent sends a stand-in."""
    body = 'json.dumps({"id": rid, "value": "\\U0001F600" * 2_000_000}, ensure_ascii=False).encode()'
    await run_code(session, PATCH_PROBE_REPLY.format(body=body), timeout=10)
    value = await session.probe("result", timeout=60)
    assert value["other"] == "too large" and "over the limit" in value["repr"]
    assert await run_code(session, "print('next')", timeout=10) == "next"


async def test_a_session_value_nested_too_deep_to_parse_is_the_sessions_failure(session):
    body = "b'{\"id\": \"' + rid.encode() + b'\", \"value\": ' + b'[' * 200_000 + b']' * 200_000 + b'}'"
    await run_code(session, PATCH_PROBE_REPLY.format(body=body), timeout=10)
    with pytest.raises(RuntimeError, match="destroyed"):  # not a SandboxError: the harness is fine
        await session.probe("result", timeout=30)
    await _in_step(session)
