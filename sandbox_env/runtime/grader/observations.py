"""Observations: what a test compared, sent out as plain data for the host to compare.

The host rewrites every comparison assertion of the frozen tests (`assert a == b`, `!=`,
`<`, `<=`, `>`, `>=`, `in`, `not in`, and the unittest `assertEqual` family of two operands)
into `observe(key, op, a, b)`, with every literal of the operands (the expected values)
replaced by `hole(i)`: the expected values stay on the host, and the process only holds the
values the code computed. `observe` encodes both operands as plain data (exact builtin
types; a subclass of int, float, str, bytes, tuple, list or dict as its base value, read
with the base type's own slots; a UserList as it iterates) and streams them as a frame at
once. How a value of the code under test chooses to be seen does not matter to soundness:
the expected value is not in this process, so no choice can aim at it. It never raises: the test goes on, and the host decides.

A Django model instance (of a model that keeps Django's equality) is sent as its concrete
model and primary key, which is what its equality compares. Any other value is sent as
`{"opaque": [type name, ref]}`, the same ref for the same object within one observation:
the host compares such values by identity. Where an assertion held no literal and a value
was opaque, the verdict computed here (`a op b`, sent along) stands instead, as it did
before (the object's own equality); where it held an expected value, identity is all an
opaque value can match, and no plain expected value is identical to it.
"""

from __future__ import annotations

import datetime
import decimal
import operator
import sys
import uuid
from typing import Any

MAX_ITEMS = 20000
MAX_DEPTH = 40
MAX_CHARS = 1 << 20
OPS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "in": lambda a, b: operator.contains(b, a),
    "not in": lambda a, b: not operator.contains(b, a),
}
_sink: Any = None
_int_value, _float_value, _str_value, _bytes_value = int.__index__, float.__float__, str.__str__, bytes.__bytes__
_tuple_iter, _list_iter, _dict_items = tuple.__iter__, list.__iter__, dict.items
_type, _issubclass, _len = type, issubclass, len
_audit = sys.audit
_modules = sys.modules


class Hole:
    """Where an expected value was: the host puts it back."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def hole(index: int) -> Hole:
    return Hole(index)


class _TooLarge(Exception):
    pass


class _Encoder:
    def __init__(self, refs: dict[int, tuple[int, Any]]) -> None:
        self.refs = refs
        self.items = 0
        self.chars = 0
        self.opaque = False
        self.holes = False

    def text(self, value: str) -> str:
        self.chars += _len(value)
        if self.chars > MAX_CHARS:
            raise _TooLarge
        return value

    def encode(self, value: Any, depth: int = 0) -> Any:
        self.items += 1
        if self.items > MAX_ITEMS or depth > MAX_DEPTH:
            raise _TooLarge
        kind = _type(value)
        if value is None or kind is bool:
            return value
        if kind is Hole:
            self.holes = True
            return {"hole": value.index}
        if _issubclass(kind, int):
            return {"i": self.text(repr(_int_value(value)))}
        if _issubclass(kind, float):
            return {"f": repr(_float_value(value))}
        if _issubclass(kind, str):
            return self.text(_str_value(value))
        if _issubclass(kind, bytes):
            return {"b": self.text(_bytes_value(value).decode("latin-1"))}
        if kind is decimal.Decimal:
            return {"d": str(value)}
        if kind is datetime.datetime:
            return {"dt": value.isoformat()}
        if kind is datetime.date:
            return {"date": value.isoformat()}
        if kind is datetime.time:
            return {"time": value.isoformat()}
        if kind is datetime.timedelta:
            return {"td": [value.days, value.seconds, value.microseconds]}
        if kind is uuid.UUID:
            return {"u": value.hex}
        if _issubclass(kind, tuple):
            return {"tuple": [self.encode(v, depth + 1) for v in _tuple_iter(value)]}
        if _issubclass(kind, list):  # a UserList (Django's ErrorList) keeps its items in .data: as it iterates
            items = list(value) if hasattr(kind, "data") else _list_iter(value)
            return [self.encode(v, depth + 1) for v in items]
        if _issubclass(kind, dict):
            return {"dict": [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in _dict_items(value)]}
        if kind is set or kind is frozenset:
            return {"set" if kind is set else "fset": [self.encode(v, depth + 1) for v in value]}
        model = _model_class()
        if model is not None and _issubclass(kind, model) and getattr(kind, "__eq__", None) is model.__eq__:
            pk = value.pk
            if pk is not None:  # Django's own equality: same concrete model and primary key
                return {"model": [value._meta.concrete_model._meta.label, self.encode(pk, depth + 1)]}
        self.opaque = True
        ref = self.refs.setdefault(id(value), (len(self.refs), value))[0]  # the object kept: ids stay unique
        return {"opaque": [getattr(kind, "__qualname__", "?")[:80], ref]}


def _model_class() -> Any:
    models = _modules.get("django.db.models.base")
    return getattr(models, "Model", None)


def _encode(value: Any, refs: dict[int, tuple[int, Any]]) -> tuple[Any, bool, bool]:
    enc = _Encoder(refs)
    try:
        return enc.encode(value), enc.opaque, enc.holes
    except _TooLarge:
        return {"opaque": ["too large", -1]}, True, enc.holes
    except Exception as exc:  # noqa: BLE001 - an object that fails to be read is opaque
        return {"opaque": [f"unreadable {type(exc).__name__}", -1]}, True, enc.holes


def observe(key: str, op: str, left: Any, right: Any) -> None:
    """Send one comparison's operands out; never raises (the host decides)."""
    refs: dict[int, tuple[int, Any]] = {}
    a, a_opaque, a_holes = _encode(left, refs)
    b, b_opaque, b_holes = _encode(right, refs)
    verdict = None
    if (a_opaque or b_opaque) and not (a_holes or b_holes) and op in OPS:
        try:
            verdict = bool(OPS[op](left, right))
        except Exception as exc:  # noqa: BLE001 - the comparison failing is a failed assertion
            verdict = f"{type(exc).__name__}"[:80]
    if _sink is not None:
        _sink({"stage": "started", "observed": [key, a, b, verdict]})


class span:  # noqa: N801 - the frozen tests call it like a function: `with _span("<key>"):`
    """One top-level statement of a frozen test, its queries counted (families/django_spans.py).

    The count is the query audit's (query_audit.py): its hook counts every statement SQLite
    runs in the process, and only this class's code may ask it where a statement starts and
    ends. At the end the span sends the count as an observation of its key; what it is held
    to stays on the host. Nothing of Django's changes: no debug cursor, no query log.
    """

    __slots__ = ("_key",)

    def __init__(self, key: str) -> None:
        self._key = key

    def __enter__(self) -> None:
        _audit("websandbox.span", "enter", self._key, None)

    def __exit__(self, *exc: Any) -> bool:
        box: list[int] = []
        _audit("websandbox.span", "exit", self._key, box)
        observe(self._key, "==", box[0] if box else None, Hole(0))
        return False


def arm(sink: Any) -> None:
    """Where observations go (the report channel's pinned note), set before the code under test runs."""
    global _sink
    _sink = sink
