"""Text that can always be sent to a model: valid Unicode, no lone surrogates.

Output comes from code the model controls. JSON can carry a lone surrogate
(`"\\udcff"`), a process can print invalid bytes, and either one makes the next
request to the model fail to encode ("surrogates not allowed"). Everything that
reaches a tool result, an error message or a graded value is passed through here:
unencodable code points become U+FFFD, valid text is returned unchanged.
"""

from __future__ import annotations

from typing import Any


def valid_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (unchanged when already valid)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        # through UTF-16: a surrogate pair split in two code points joins again, a lone one becomes U+FFFD
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def decode_output(data: bytes) -> str:
    """Bytes a program wrote, as text: invalid UTF-8 becomes U+FFFD."""
    return data.decode("utf-8", "replace")


def _valid(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def valid_json_text(value: Any) -> Any:
    """A parsed JSON value with `valid_text` applied to every string in it, keys included.

    Lists and dicts are mended in place, walked without recursion: a value nested as deep
    as the parser allows (code under test chooses the depth) must not raise here.
    """
    if isinstance(value, str):
        return valid_text(value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    node[i] = valid_text(item)
                elif isinstance(item, list | dict):
                    stack.append(item)
        elif isinstance(node, dict):
            if not all(_valid(k) for k in node if isinstance(k, str)):
                items = list(node.items())
                node.clear()
                node.update((valid_text(k) if isinstance(k, str) else k, v) for k, v in items)
            for key, item in node.items():
                if isinstance(item, str):
                    node[key] = valid_text(item)
                elif isinstance(item, list | dict):
                    stack.append(item)
    return value


def described_error(error: BaseException) -> str:
    """`Kind: message` of an error, naming the first error in its chain of causes that says something.

    verifiers wraps a provider's failure in errors with empty messages (`ModelError: `);
    the cause that says what happened (an HTTP 500 and its body) sits further down.
    """
    kinds, seen, current = [], set(), error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        kinds.append(type(current).__name__)
        if str(current).strip():
            return f"{' -> '.join(kinds)}: {str(current).strip()}"
        current = current.__cause__ or current.__context__
    return " -> ".join(kinds) + ": (no message)"
