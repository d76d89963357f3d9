"""An orm answer is graded by its code: rows that did not come from a query over the data in front of it score 0.

The attacks, as a policy that has read this repository would make them:
- replay: type in the expected rows of the rollout's own database (the repository holds every
  stored variant's rows, and the rollout's database can be recognised from inside);
- look up: recognise the database by a fingerprint (its row counts and titles) and pick the matching stored rows;
- detect grading: behave only on the databases it recognises (a method right on the image's
  databases only is the same class: right where it was seen, wrong on unseen rows).
Every one of them leaves the right rows in `result`, so the row comparison passes; the cells run
again over grading worlds drawn per grading (families/orm_replay.py) do not. The defence must not
cost an honest answer: the reference with an exploratory print and a failing cell around it, and a
repair made by fixing the file with bash and running it, score 1.0.
"""

from __future__ import annotations

import json

import pytest

from sandbox_env.dataset import load_rows
from sandbox_env.families.base import TaskRow
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker

HAND, GENERATED, REPAIR = "orm_adv_01", "orm_gen_00ff3262ff4d", "orm_adv_01_fix_0c413af4ce4c"
REPAIR_FILE = "/workspace/query.py"


def _task(task_id: str) -> TaskRow:
    return TaskRow.from_info(next(r["info"] for r in load_rows() if r["info"]["task_id"] == task_id))


def _cell(code: str) -> dict:
    return {"tool": "execute_code", "args": {"code": code}}


def _stored_rows(task: TaskRow) -> dict[str, list]:
    return task.grading["fixture_variants"]


async def _grade(backend, image, task: TaskRow, calls: list[dict]):
    run = await scripted_rollout(backend, image, task, calls)
    assert run.grade.scoring_error is None, run.grade.scoring_error  # never a harness fault: the submission's own 0
    return run


# the database's row counts and its books' titles: the drawn variants add the same number of rows each,
# so counts alone tell only variant 0 from the rest, and a lookup by them would hit by luck
FINGERPRINT = (
    "(Book.objects.count(), Sale.objects.count(), Review.objects.count(),"
    " '|'.join(sorted(Book.objects.values_list('title', flat=True))))"
)
LOOKUP = """
stored = json.loads({stored!r})
fingerprint = {fingerprint}
known = json.loads({fingerprints!r})
result = [tuple(r) for r in stored[known[str(fingerprint)]]] if str(fingerprint) in known else []
"""


PROBES = 40  # rollouts an attacker spends probing at most; a variant is drawn per sandbox, so all show up long before


async def _fingerprints(backend, image, task: TaskRow) -> dict[str, str]:
    """Every stored variant's fingerprint, as an attacker would collect them over epochs (probing until each is seen)."""
    found: dict[str, str] = {}
    probe = _cell(f"print({FINGERPRINT})")
    for _ in range(PROBES):
        run = await scripted_rollout(backend, image, task, [probe])
        found[run.outputs[0].strip()] = str(run.final["fixture_variant"])
        if set(found.values()) >= set(_stored_rows(task)):
            break
    return found


@pytest.mark.parametrize("task_id", [HAND, GENERATED])
async def test_rows_typed_in_from_the_stored_rows_of_the_rollouts_own_database_score_zero(backend, image, task_id):
    task = _task(task_id)
    for rows in list(_stored_rows(task).values())[:2]:
        run = await _grade(backend, image, task, [_cell(f"result = {[tuple(r) for r in rows]!r}")])
        assert run.grade.score == 0.0, run.grade.reason


@pytest.mark.parametrize("task_id", [HAND, GENERATED])
async def test_rows_looked_up_by_recognising_the_database_score_zero(backend, image, task_id):
    task = _task(task_id)
    fingerprints = await _fingerprints(backend, image, task)
    stored = json.dumps(_stored_rows(task))
    code = "import json\n" + LOOKUP.format(stored=stored, fingerprint=FINGERPRINT, fingerprints=json.dumps(fingerprints))
    hits = 0
    for _ in range(4):  # a rollout may land on a variant the attacker has not fingerprinted yet
        run = await _grade(backend, image, task, [_cell(code)])
        assert run.grade.score == 0.0, run.grade.reason  # the grading worlds are in no table
        hits += run.grade.checks[2]["passed"]  # where the lookup found the rollout's own rows
    assert hits, "the lookup never found the rollout's rows: the attack was not made"


async def test_code_that_behaves_only_on_databases_it_recognises_scores_zero(backend, image):
    task = _task(GENERATED)
    fingerprints = await _fingerprints(backend, image, task)
    gate = f"if str({FINGERPRINT}) not in {list(fingerprints)!r}:\n    raise SystemExit('not a database I know')\n"
    run = await _grade(backend, image, task, [_cell(gate + task.grading["reference_cell"])])
    assert run.grade.checks[2]["passed"] and run.grade.score == 0.0, run.grade.reason


async def test_an_honest_answer_keeps_its_one_with_prints_and_failing_cells_around_it(backend, image):
    task = _task(GENERATED)
    calls = [
        _cell("print(Book.objects.count()); Book.objects.get(title='no such title')"),
        _cell(task.grading["reference_cell"]),
        _cell("print(result[:2]); undefined_name"),
    ]
    run = await _grade(backend, image, task, calls)
    assert run.grade.score == 1.0, run.grade.reason
    assert run.grade.metrics["replay_worlds"] == 2, run.grade.metrics


async def test_a_repair_fixed_with_bash_and_run_from_its_file_scores_one(backend, image):
    task = _task(REPAIR)
    fixed = _task(task.base_task or HAND).grading["reference_cell"]
    write = {"tool": "bash", "args": {"command": f"cat > {REPAIR_FILE} <<'EOF'\n{fixed}\nEOF"}}
    run = await _grade(backend, image, task, [write, _cell(f"exec(open({REPAIR_FILE!r}).read())")])
    assert run.grade.score == 1.0, run.grade.reason


async def test_through_the_rollout_core_the_cells_are_recorded_and_typed_in_rows_score_zero(backend, image):
    """The path both front doors take: a Lease records the cells as the model sends them."""
    from sandbox_env.rollout.core import Rollouts, SandboxSettings

    task = _task(HAND)
    rollouts = Rollouts(SandboxSettings(image=image, pool_size=0), backend)
    honest = await rollouts.open(task)
    await honest.call("execute_code", {"code": task.grading["reference_cell"]})
    assert honest.cells == [task.grading["reference_cell"]]
    grade = await honest.finish()
    assert grade.score == 1.0 and grade.metrics["replay_worlds"] == 2, grade.reason
    typed = await rollouts.open(task)
    rows = _stored_rows(task)[str(0)]
    await typed.call("bash", {"command": "echo bash commands are not recorded"})
    await typed.call("execute_code", {"code": f"result = {[tuple(r) for r in rows]!r}"})
    assert len(typed.cells) == 1
    grade = await typed.finish()
    assert grade.score == 0.0 and grade.scoring_error is None, grade.reason
