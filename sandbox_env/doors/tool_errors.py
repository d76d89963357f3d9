"""What the model reads when a tool call of its own could not be run: the classic door's error text.

verifiers 0.3.x parses each call's arguments itself and hands the exception to the
environment's formatter; its default shows the bare decoder message (`Expecting ','
delimiter: line 2 column 15`), which never says that the arguments were the problem, so
a model cannot tell a broken call from a failed command and rarely resends it. The v1
chat loop says "invalid JSON in tool arguments ...; resend the call with valid JSON":
the classic door says the same, with the place of the error and what a call looks like.
Any other error keeps its own text.
"""

from __future__ import annotations

import json

RESEND = 'send the call again with its arguments as one JSON object, e.g. {"command": "ls"} for bash'


def tool_error_text(error: Exception) -> str:
    """The tool message for a call that failed before or while it ran."""
    if isinstance(error, json.JSONDecodeError):
        return (
            f"Error: the tool call's arguments are not valid JSON ({error.msg} at line {error.lineno} column "
            f"{error.colno}); nothing was run: {RESEND}."
        )
    if isinstance(error, ValueError) and str(error).startswith("Expected tool arguments to be a dict"):
        got = str(error).split(", got ", 1)[-1]
        return f"Error: the tool call's arguments must be a JSON object, not {got}; nothing was run: {RESEND}."
    return f"Error: {error}"
