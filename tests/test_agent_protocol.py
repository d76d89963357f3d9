"""The transport-neutral half of the agent channel, over an in-memory transport (no Docker).

The agent here is a script: for each request it answers with the lines a test gives it,
where `{id}` stands for the request's id. What is checked is what the host trusts on any
transport: only a line with the current id ends a call, heartbeats are not replies, silence
and an oversized line break the channel for good, and a closed stream says so.
"""

from __future__ import annotations

import json
import queue

import pytest

from sandbox_env.sandbox import channel as protocol
from sandbox_env.sandbox.channel import AgentProtocol, ChannelError


class ScriptedAgent(AgentProtocol):
    def __init__(self, *answers: list[str]) -> None:
        super().__init__()
        self._answers = list(answers)
        self._inbox: queue.Queue[bytes] = queue.Queue()
        self._open = False
        self.connects = 0

    def _connect(self) -> None:
        self._open = True
        self.connects += 1

    def _connected(self) -> bool:
        return self._open

    def _send(self, data: bytes, timeout: float) -> None:
        rid = json.loads(data)["id"]
        for line in self._answers.pop(0):
            self._inbox.put(line.replace("{id}", rid).encode())

    def _receive(self, timeout: float) -> bytes:
        try:
            return self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None

    def _hang_up(self) -> None:
        self._open = False


def test_only_a_line_with_the_current_id_ends_a_call_and_the_rest_is_counted_as_dropped():
    agent = ScriptedAgent(
        ['{"id": "forged", "ok": false}\n', "not json\n", '{"id": "{id}", "hb": 1}\n', '{"id": "{id}", "ok": true}\n']
    )
    reply = agent.call({"op": "ping"}, wait=30)
    assert reply["ok"] is True and "hb" not in reply
    assert agent.dropped_lines == 2 and agent.broken is None


def test_a_reply_split_across_chunks_is_put_back_together():
    agent = ScriptedAgent(['{"id": "{id}", ', '"out": "x"}', "\n"])
    reply = agent.call({"op": "ping"}, wait=30)
    assert reply["out"] == "x" and agent.dropped_lines == 0


def test_bytes_after_a_reply_in_the_same_chunk_are_kept_for_the_next_call():
    agent = ScriptedAgent(['{"id": "{id}", "ok": 1}\n{"id": "stale", '], ['"x": 0}\n{"id": "{id}", "ok": 2}\n'])
    assert agent.call({"op": "ping"}, wait=30)["ok"] == 1
    assert agent.call({"op": "ping"}, wait=30)["ok"] == 2
    assert agent.dropped_lines == 1 and agent.broken is None


def test_silence_after_the_first_answer_breaks_the_channel_for_every_later_call(monkeypatch):
    monkeypatch.setattr(protocol, "SILENCE_LIMIT", 0.05)
    agent = ScriptedAgent(['{"id": "{id}", "ok": true}\n'], [], ['{"id": "{id}", "ok": true}\n'])
    agent.call({"op": "ping"}, wait=30)
    with pytest.raises(ChannelError, match="stopped answering"):
        agent.call({"op": "ping"}, wait=30)
    with pytest.raises(ChannelError, match="stopped answering.*cannot be used any more"):
        agent.call({"op": "ping"}, wait=30)
    assert agent.connects == 1


def test_before_its_first_answer_the_agent_is_held_only_to_the_calls_own_deadline(monkeypatch):
    monkeypatch.setattr(protocol, "SILENCE_LIMIT", 0.0)
    agent = ScriptedAgent([])
    with pytest.raises(ChannelError, match="did not finish the call within 0.05s"):
        agent.call({"op": "ping"}, wait=0.05)


def test_a_line_over_the_bound_breaks_the_channel_with_its_reason(monkeypatch):
    monkeypatch.setattr(protocol, "LINE_MAX", 64)
    agent = ScriptedAgent(['{"id": "{id}", "out": "' + "x" * 100 + '"}\n'])
    with pytest.raises(ChannelError, match="broke the protocol"):
        agent.call({"op": "ping"}, wait=30)
    assert "broke the protocol" in (agent.broken or "")


def test_a_closed_stream_is_reported_as_broken():
    agent = ScriptedAgent([""])
    with pytest.raises(ChannelError, match="it closed"):
        agent.call({"op": "ping"}, wait=30)
    with pytest.raises(ChannelError, match="cannot be used any more"):
        agent.call({"op": "ping"}, wait=30)
    assert agent.connects == 1  # never reopened: the agent exits when its stdin closes
