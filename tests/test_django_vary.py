"""Hidden-test data drawn per grading (sandbox_env/families/django_vary.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sandbox_env.families import django_vary
from sandbox_env.families.django import FAMILY, make_canaries
from sandbox_env.families.django_vary import VaryError

TASKS = Path(__file__).resolve().parents[1] / "sandbox_env" / "tasks" / "django"
SOURCE = (
    'def test_x(db):\n    make(name="kettle", qty=106)\n    assert total() == (3, 1 + 106)\n'
    '    assert f"kettle-{1}" == "kettle-1"\n'
)


def _varied() -> list[str]:
    return [f.name for f in sorted(TASKS.iterdir()) if FAMILY.compile_task(f).grading.get("vary")]


def test_tokens_are_replaced_in_int_constants_and_whole_words_of_strings():
    decls = django_vary.normalize([{"token": 106, "range": [10, 40]}, {"token": "kettle", "keep": 1}], "t")
    out = django_vary.substitute({"hidden/test_a.py": SOURCE}, decls, {106: 17, "kettle": "kqzzia"})["hidden/test_a.py"]
    assert "qty=17" in out and "(3, 1 + 17)" in out and "'kqzzia'" in out and "'kqzzia-1' == 'kqzzia-1'" in out
    assert "106" not in out and "kettle" not in out


def test_a_draw_avoids_the_tests_literals_and_other_draws_and_keeps_the_prefix():
    decls = django_vary.normalize(
        [{"token": 106, "range": [100, 111]}, {"token": 107, "range": [100, 111]}, {"token": "teapot", "keep": 2}], "t"
    )
    for seed in range(30):
        v = django_vary.draw(decls, {"h": SOURCE + "x = (107, 100, 101)\n"}, "", random.Random(seed))
        assert v[106] not in (100, 101, 106, 107, 1, 3) and v[106] != v[107]
        assert v["teapot"].startswith("te") and len(v["teapot"]) == 6 and v["teapot"] != "teapot"


@pytest.mark.parametrize(
    "raw, spec, why",
    [
        ([{"token": 999, "range": [1, 50]}], "", "no int literal"),
        ([{"token": 106, "range": [1, 5]}], "", "too narrow"),
        ([{"token": 106, "range": [1, 50]}], "quantities up to 106", "occurs in the spec"),
        ([{"token": "kettle"}], "a kettle", "occurs in the spec"),
        ([{"token": "pot"}], "", "no string literal"),
        ([{"token": 106, "range": [1, 50], "step": 2}], "", "unknown key"),
        ([{"token": "Kettle"}], "", "lowercase word"),
    ],
)
def test_an_unsound_declaration_is_refused(raw, spec, why):
    with pytest.raises(VaryError, match=why):
        django_vary.validate(django_vary.normalize(raw, "t"), {"hidden/test_a.py": SOURCE}, spec, "t")


def test_every_varied_task_draws_other_hidden_data_per_grading_and_keeps_its_test_ids():
    varied = _varied()
    assert "dj01" in varied
    for tid in varied:
        g = FAMILY.compile_task(TASKS / tid).grading
        seen = set()
        for seed in range(4):
            hidden, values = django_vary.drawn_hidden(g, random.Random(seed))
            seen.add(tuple(sorted(map(str, values.values()))))
            assert all(str(d["token"]) not in values.values() for d in g["vary"])
            suite = make_canaries(g, random.Random(seed))
            assert set(g["test_ids"]) <= set(suite.real)
        assert len(seen) == 4, tid


def test_an_f_string_of_constants_becomes_a_plain_literal_the_host_keeps():
    decls = django_vary.normalize([{"token": 1987, "range": [1000, 9999]}], "t")
    src = 'def test_y(m):\n    assert get(f"/a/{1987}/") == f"/a/{1987:05d}/"\n    assert f"{m:02d}" == "01"\n'
    out = django_vary.substitute({"h.py": src}, decls, {1987: 4321})["h.py"]
    assert "get('/a/4321/') == '/a/04321/'" in out and "f'{m:02d}'" in out


def test_a_drawn_word_never_holds_a_fixed_word_the_tests_search_for():
    # a search for "alp" must find no row: a drawn title "alp..." would be found
    src = 'def test_s(client):\n    make(title="alpha")\n    assert search("alp") == []\n'
    decls = django_vary.normalize([{"token": "alpha", "keep": 2}], "t")
    values = [django_vary.draw(decls, {"h.py": src}, "", random.Random(seed))["alpha"] for seed in range(500)]
    assert all(v.startswith("al") and "alp" not in v for v in values), [v for v in values if "alp" in v][:3]
