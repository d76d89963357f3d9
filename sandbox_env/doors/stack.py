"""Which verifiers stack is installed: `classic` (0.3.x) or `v1` (0.4.x)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def verifiers_version() -> tuple[int, ...]:
    try:
        text = version("verifiers")
    except PackageNotFoundError:
        return ()
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def installed_stack() -> str:
    """`v1` from verifiers 0.4 on (the classic stack was removed there), else `classic`."""
    return "v1" if verifiers_version() >= (0, 4) else "classic"
