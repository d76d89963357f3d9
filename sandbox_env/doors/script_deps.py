"""Whether this interpreter can run a PEP 723 script as it is: its `dependencies` and `requires-python` met here.

verifiers' v1 harnesses ship their chat program as a PEP 723 script and prepare it with
`uv sync --script`, which resolves the script's dependencies from the package index (and,
where `uv` is missing, installs `uv` with `pip install --user` or a downloaded installer
script). With no network every rollout then fails before its first turn. The chat
program's dependencies are verifiers' own (openai, mcp, httpx, tenacity, ...), so they
are already installed wherever verifiers is: websandbox's harness (doors/v1/harness.py)
runs the program with this interpreter when this module says every requirement is met,
and nothing is resolved, downloaded or installed.

Pure logic (no verifiers import): the metadata block is read as PEP 723's reference
implementation reads it, requirements with `packaging`.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

# PEP 723's reference regular expression
_BLOCK = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")


@dataclass(frozen=True)
class ScriptNeeds:
    dependencies: tuple[str, ...]
    requires_python: str | None


def script_needs(source: str) -> ScriptNeeds:
    """The script's `dependencies` and `requires-python` (none when it has no `script` block)."""
    blocks = [m for m in _BLOCK.finditer(source) if m.group("type") == "script"]
    if len(blocks) > 1:
        raise ValueError("the script has more than one `# /// script` block")
    if not blocks:
        return ScriptNeeds((), None)
    content = "".join(line[2:] if line.startswith("# ") else line[1:] for line in blocks[0].group("content").splitlines(True))
    data = tomllib.loads(content)
    return ScriptNeeds(tuple(data.get("dependencies", ())), data.get("requires-python"))


def unmet_needs(source: str) -> list[str]:
    """What this interpreter lacks to run the script as it is, one phrase each; empty when it can."""
    needs = script_needs(source)
    unmet = []
    here = ".".join(map(str, sys.version_info[:3]))
    if needs.requires_python and here not in SpecifierSet(needs.requires_python):
        unmet.append(f"Python {needs.requires_python} (this is {here})")
    for text in needs.dependencies:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            unmet.append(f"{text!r} ({exc})")
            continue
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            unmet.append(f"{text} (not installed)")
            continue
        if not requirement.specifier.contains(installed, prereleases=True):
            unmet.append(f"{text} (installed: {installed})")
    return unmet
