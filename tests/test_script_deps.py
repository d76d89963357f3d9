"""Whether this interpreter can run a PEP 723 script as it is (sandbox_env/doors/script_deps.py)."""

from __future__ import annotations

import pytest

from sandbox_env.doors.script_deps import script_needs, unmet_needs


def _script(dependencies: str, requires_python: str = ">=3.10") -> str:
    return f"# /// script\n# requires-python = \"{requires_python}\"\n# dependencies = {dependencies}\n# ///\nprint('hi')\n"


def test_the_metadata_block_is_read_as_pep_723_reads_it():
    needs = script_needs(_script('["packaging>=20", "pytest"]'))
    assert needs.dependencies == ("packaging>=20", "pytest") and needs.requires_python == ">=3.10"
    assert script_needs("print('no block')\n").dependencies == ()


def test_installed_requirements_are_met_and_missing_or_too_old_ones_are_named():
    assert unmet_needs(_script('["packaging>=20", "pytest"]')) == []
    unmet = unmet_needs(_script('["packaging>=999", "no-such-package-websandbox"]'))
    assert len(unmet) == 2
    assert "packaging>=999 (installed:" in unmet[0] and "no-such-package-websandbox (not installed)" in unmet[1]


def test_a_requirement_whose_marker_excludes_this_interpreter_is_not_needed():
    assert unmet_needs(_script("[\"no-such-package-websandbox; python_version < '3.0'\"]")) == []


def test_a_python_the_script_refuses_is_named():
    assert unmet_needs(_script("[]", requires_python="<3.0"))[0].startswith("Python <3.0")


def test_two_script_blocks_are_refused():
    with pytest.raises(ValueError, match="more than one"):
        script_needs(_script("[]") + _script("[]"))
