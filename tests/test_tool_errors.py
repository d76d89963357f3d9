"""A tool call whose arguments are not valid JSON is answered so that the model knows to resend it (classic door)."""

from __future__ import annotations

import json

import pytest

from sandbox_env.doors.tool_errors import tool_error_text


def _decode_error(text: str) -> json.JSONDecodeError:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    return caught.value


def test_malformed_arguments_are_said_to_be_invalid_json_with_where_and_a_request_to_resend():
    text = tool_error_text(_decode_error('{"command": "ls"\n "x": 1}'))
    assert "not valid JSON" in text and "line 2 column 2" in text
    assert "nothing was run" in text and "send the call again" in text


def test_arguments_that_are_json_but_not_an_object_are_said_to_need_one():
    error = ValueError("Expected tool arguments to be a dict, got list: [1, 2]")
    text = tool_error_text(error)
    assert "must be a JSON object" in text and "list: [1, 2]" in text and "send the call again" in text


def test_any_other_error_keeps_its_own_text():
    assert tool_error_text(RuntimeError("the sandbox is gone")) == "Error: the sandbox is gone"
