"""Validation of the session probe's tagged value on the host, before anything reads it.

The probe's encoder (runtime/container/session.py `encode`) runs in the model's own Python
session, so a cell can replace it and make the probe return any JSON at all, e.g.
{"list": 5}. The host therefore trusts nothing about the shape it gets back and checks
the whole tagged grammar first, iteratively (no recursion), with bounds:

    value := None | bool | int | float (finite) | str
           | {"list": [value, ...]} | {"tuple": [value, ...]}
           | {"other": str, "repr": str}
           | {"missing": true} | {"unreadable": str}      (the whole value only)

Lists are JSON arrays, tags are dicts with exactly the keys above, at most MAX_NODES
values, MAX_DEPTH levels and MAX_TEXT characters of text in all. The honest encoder
never produces anything else, so a value outside the grammar means the session was
altered: the submission's 0.0, reported as tampering, never a harness fault.
"""

from __future__ import annotations

import math
from typing import Any

MAX_NODES = 100_001  # the session's MAX_PROBE_ITEMS, plus the outer list
MAX_DEPTH = 64
MAX_TEXT = 16 << 20
_CONTAINERS = ("list", "tuple")


def _where(ref: tuple | None) -> str:
    """A readable path from a chain of (parent, index) pairs."""
    parts: list[str] = []
    while ref is not None:
        ref, index = ref
        parts.append(f"[{index}]")
    return "".join(reversed(parts)) or "the value"


def probe_problem(tagged: Any) -> str | None:
    """None when `tagged` follows the probe's grammar within the bounds, else what is wrong and where."""
    if isinstance(tagged, dict) and set(tagged) == {"missing"}:
        return None if tagged["missing"] is True else "a 'missing' tag that is not true"
    if isinstance(tagged, dict) and set(tagged) == {"unreadable"}:
        return None if isinstance(tagged["unreadable"], str) else "an 'unreadable' tag without a text"
    nodes, text = 0, 0
    stack: list[tuple[Any, int, tuple | None]] = [(tagged, 0, None)]
    while stack:
        node, depth, path = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            return f"more than {MAX_NODES} values"
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels at {_where(path)}"
        if node is None or type(node) in (bool, int):
            continue
        if type(node) is float:
            if not math.isfinite(node):
                return f"a number that is not finite ({node!r}) at {_where(path)}"
            continue
        if type(node) is str:
            text += len(node)
            if text > MAX_TEXT:
                return f"more than {MAX_TEXT} characters of text"
            continue
        if type(node) is not dict:
            return f"a {type(node).__name__} where a tagged value belongs, at {_where(path)}"
        keys = set(node)
        if len(keys) == 1 and (key := next(iter(keys))) in _CONTAINERS:
            items = node[key]
            if type(items) is not list:
                return f"a {key!r} tag holding a {type(items).__name__} instead of an array, at {_where(path)}"
            for i in range(len(items) - 1, -1, -1):
                stack.append((items[i], depth + 1, (path, i)))
            continue
        if keys == {"other", "repr"}:
            if not (type(node["other"]) is str and type(node["repr"]) is str):
                return f"an 'other' tag whose type name or repr is not text, at {_where(path)}"
            text += len(node["other"]) + len(node["repr"])
            if text > MAX_TEXT:
                return f"more than {MAX_TEXT} characters of text"
            continue
        return f"an object with keys {sorted(map(str, keys))[:5]} that is no tag of the probe, at {_where(path)}"
    return None
