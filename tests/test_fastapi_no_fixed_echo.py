"""No fixed answer key: a fastapi check that gives back what it sends must send a drawn value.

The rule is `fastapi_vary.require_drawn_echoes`, applied when a task folder compiles
(`FastAPIFamily.compile_task`); a repair row grades with its base task's checks and draws, so
it holds the rule when its base does. Stored generated composed rows (generate/compose_store.py)
were composed before the rule and are not recompiled by it: `COMPOSED_BEFORE_THE_RULE` records
those that break it, and no other may.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from sandbox_env.dataset import load_rows
from sandbox_env.families.fastapi import FAMILY, PROMPT_TAIL
from sandbox_env.families.fastapi_checks import CheckError, normalize_check
from sandbox_env.families.fastapi_vary import (
    VaryError,
    echoes,
    normalize,
    require_drawn_echoes,
    sends_a_token,
)

TASKS = Path(__file__).resolve().parents[1] / "sandbox_env" / "tasks" / "fastapi"
REFUSAL = "declare a [[vary]] token"

# the 13 tasks that drew no value before the rule, and what each draws now (none: no input to draw)
FORMERLY_FIXED = {
    "fastapi_common_dependencies": True,
    "fastapi_custom_openapi": False,  # no request sends a value: the document and the counter are fixed
    "fastapi_dependency_cache": True,
    "fastapi_enum_path": True,
    "fastapi_exclude_unset": False,  # the store is printed in the spec; every answer is a read of it
    "fastapi_http_middleware": True,
    "fastapi_lifespan": True,
    "fastapi_mounted_subapp": True,
    "fastapi_oauth2_password": True,
    "fastapi_query_defaults": True,
    "fastapi_sse_basic": True,
    "fastapi_sse_events": True,
    "fastapi_yield_teardown": False,  # no request sends a value: the log is fixed by the spec
}

# generated composed rows stored before the rule whose part checks give back a value sent as written
# (their parts drew nothing then, or the composer found the part's token not drawable over the whole
# text); composing them again from the parts as they are now is what clears them
COMPOSED_BEFORE_THE_RULE = frozenset(
    {
        "fastapi_composed_038ba943de37",
        "fastapi_composed_055331c382f3",
        "fastapi_composed_055c8690f911",
        "fastapi_composed_09d1c17a9531",
        "fastapi_composed_0c9168b8a606",
        "fastapi_composed_0fac043570cf",
        "fastapi_composed_16786160c63d",
        "fastapi_composed_188dba867b71",
        "fastapi_composed_19c6f1f861dc",
        "fastapi_composed_206596e80ca1",
        "fastapi_composed_21525b79a31b",
        "fastapi_composed_21b462b9489c",
        "fastapi_composed_25e5400d1019",
        "fastapi_composed_39ae515d654f",
        "fastapi_composed_39ec17a1d20d",
        "fastapi_composed_3dc801546a7e",
        "fastapi_composed_3f3ed3039808",
        "fastapi_composed_40b349945cb4",
        "fastapi_composed_41acfb910bc2",
        "fastapi_composed_42a736338ac5",
        "fastapi_composed_47a165b8e430",
        "fastapi_composed_4eb3eb27ac15",
        "fastapi_composed_59b81b8e85de",
        "fastapi_composed_5ecc965968e1",
        "fastapi_composed_5f0099512060",
        "fastapi_composed_69b2af924323",
        "fastapi_composed_6f3274893538",
        "fastapi_composed_714018474f59",
        "fastapi_composed_72cb9aa12dd4",
        "fastapi_composed_7ee7aac3f4b2",
        "fastapi_composed_80d7197d8db5",
        "fastapi_composed_83681238f939",
        "fastapi_composed_875da1a14964",
        "fastapi_composed_9187c784b94a",
        "fastapi_composed_9959cdf8188b",
        "fastapi_composed_99d84831b5c2",
        "fastapi_composed_9e82b4e0ca6f",
        "fastapi_composed_a5954cb38397",
        "fastapi_composed_a76a02e0db21",
        "fastapi_composed_ac5cc74e699c",
        "fastapi_composed_b0165903a722",
        "fastapi_composed_b3fc7bce873d",
        "fastapi_composed_b53459534eca",
        "fastapi_composed_bcf1e51e37e4",
        "fastapi_composed_bd41f4672d36",
        "fastapi_composed_c0b15c384889",
        "fastapi_composed_c1c9e875b8f1",
        "fastapi_composed_c49b9012e0aa",
        "fastapi_composed_d600331c4d1e",
        "fastapi_composed_e5d9a892a8c1",
        "fastapi_composed_edd0fafe86d1",
        "fastapi_composed_f0bb15f8c470",
        "fastapi_composed_f118937d2ccf",
        "fastapi_composed_f2da181b4172",
    }
)


def check(raw: dict) -> dict:
    return normalize_check(raw, "test")


def spec_of(info: dict) -> str:
    """The title and spec of a row's prompt: what precedes the family's fixed tail."""
    return info["prompt"].split(PROMPT_TAIL)[0]


def fixed_echoes(info: dict) -> list[str]:
    """The checks of a fastapi row that give back a value they send while sending no drawn one."""
    grading = json.loads(info["grading"]) if isinstance(info["grading"], str) else info["grading"]
    decls = grading.get("vary") or []
    spec = spec_of(info)
    return [c["name"] for c in grading["checks"] if echoes(c, spec) and not sends_a_token(c, decls)]


def fastapi_rows() -> list[dict]:
    return [r["info"] for r in load_rows() if r["info"]["family"] == "fastapi"]


ECHO = check(
    {
        "name": "a name is stored and read back",
        "steps": [
            {"method": "POST", "path": "/items/", "json": {"name": "Lamp", "price": 19.5}, "expect": {"status": 201}},
            {"path": "/items/0", "expect": {"status": 200, "json": {"name": "Lamp", "price": 19.5}}},
        ],
    }
)


def test_every_fastapi_task_source_compiles_under_the_rule():
    folders = sorted(p for p in TASKS.iterdir() if (p / "task.toml").is_file())
    assert len(folders) >= 40
    for folder in folders:
        FAMILY.compile_task(folder)


@pytest.mark.parametrize("source", ["hand", "repair"])
def test_every_row_that_gives_back_a_sent_value_sends_a_drawn_one(source):
    rows = [info for info in fastapi_rows() if info["source"] == source]
    assert rows
    broken = {info["task_id"]: names for info in rows if (names := fixed_echoes(info))}
    assert not broken, f"{source} rows with a fixed answer key (run `python build_tasks.py`): {broken}"


def test_no_composed_row_but_those_stored_before_the_rule_breaks_it():
    rows = [info for info in fastapi_rows() if info["source"] == "composed"]
    broken = {info["task_id"] for info in rows if fixed_echoes(info)}
    assert broken <= COMPOSED_BEFORE_THE_RULE, sorted(broken - COMPOSED_BEFORE_THE_RULE)


def test_the_formerly_fixed_tasks_draw_values_where_a_request_sends_one():
    for task_id, draws in FORMERLY_FIXED.items():
        row = FAMILY.compile_task(TASKS / task_id)
        assert bool(row.grading["vary"]) == draws, task_id


def test_an_echo_without_a_drawn_value_is_refused_with_what_to_do():
    with pytest.raises(VaryError, match=re.escape("gives back ['19.5', 'Lamp']") + ".*" + re.escape(REFUSAL)):
        require_drawn_echoes([ECHO], [], "An in-memory list of items.", "t")


def test_a_drawn_value_in_any_request_of_the_check_admits_it():
    require_drawn_echoes([ECHO], normalize([{"token": "Lamp", "kind": "word"}], "t"), "An in-memory list.", "t")
    require_drawn_echoes([ECHO], normalize([{"token": 19.5, "kind": "float", "range": [1, 99]}], "t"), "A list.", "t")


def test_a_value_the_spec_names_is_no_echo():
    spec = "A list of items; the lamp is sold as `Lamp` for 19.5."
    assert echoes(ECHO, spec) == []
    require_drawn_echoes([ECHO], [], spec, "t")


def test_what_the_rule_leaves_alone():
    derived = check({"name": "d", "path": "/predict", "query": {"x": 2}, "expect": {"status": 200, "json": {"result": 84.0}}})
    names = check({"name": "n", "path": "/items", "query": {"limit": "many"}, "expect": {"json": {"limit": 1}}})
    spelled = check({"name": "s", "path": "/items/foo", "expect": {"json": {"name": "Foo"}}})
    at_path = check({"name": "a", "path": "/items/bar", "expect": {"json_at": [{"at": ["paths", "bar"], "exists": True}]}})
    assert [echoes(c, "") for c in (derived, names, spelled, at_path)] == [[], [], [], []]


def test_echoes_are_found_in_every_place_a_request_sends_and_an_answer_gives_back():
    cases = [
        ({"path": "/users/carol"}, {"text": "hello carol"}),
        ({"path": "/x", "query": {"q": "tern"}}, {"json_at": [{"at": ["q"], "equals": "tern"}]}),
        ({"path": "/x", "headers": {"Authorization": "Bearer mallory"}}, {"headers": {"x-user": "mallory"}}),
        ({"path": "/x", "cookies": {"session": "s3cr3t"}}, {"json": {"session": "s3cr3t"}}),
        ({"method": "POST", "path": "/x", "form": {"username": "ann"}}, {"json_has": {"user": "ann"}}),
        ({"method": "POST", "path": "/x", "files": [{"field": "f", "filename": "ledger.txt"}]}, {"json": ["ledger.txt"]}),
        ({"method": "POST", "path": "/x", "json": {"n": 7}}, {"sse": [{"data_json": {"n": 7.0}}]}),
        ({"path": "/items/41"}, {"json": {"id": 41}}),
    ]
    for request, expect in cases:
        c = check({"name": "c", **request, "expect": expect})
        assert echoes(c, "") != [], (request, expect)


def test_a_task_whose_echo_lost_its_token_does_not_compile(tmp_path):
    src = TASKS / "fastapi_common_dependencies"
    folder = tmp_path / src.name
    shutil.copytree(src, folder)
    toml = (folder / "task.toml").read_text()
    head, _, rest = toml.partition("[[vary]]")
    (folder / "task.toml").write_text(head + "[[checks]]" + rest.partition("[[checks]]")[2])
    assert "[[vary]]" not in (folder / "task.toml").read_text()
    with pytest.raises(CheckError, match=r"gives back .* none of its requests sends a drawn value"):
        FAMILY.compile_task(folder)
