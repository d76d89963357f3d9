"""A seeded world in the image is the world the host's evaluator reads, and building one costs little CPU."""

from __future__ import annotations

import json

import pytest

from sandbox_env.constants import CONTAINER_PYTHON, CONTAINER_RUNTIME
from sandbox_env.families.orm import SESSION_DB, SESSION_ENV, image_db
from sandbox_env.generate.fixture import world
from sandbox_env.runtime.container.orm_fixture.world import SEEDED

pytestmark = pytest.mark.docker

MODELS = ("Publisher", "Author", "Genre", "Book", "Store", "Sale", "Review", "Contribution")

# every row of every model through the ORM, values as text, ordered by id; and the M2M pairs
DUMP = """
import json, sys
import django
django.setup()
from orm_fixture.shop import models
out = {}
for name in MODELS_HERE:
    model = getattr(models, name)
    fields = [f.attname for f in model._meta.concrete_fields]
    out[name] = [[None if v is None else str(v) for v in row]
                 for row in model.objects.order_by("id").values_list(*fields)]
    out[name + ".fields"] = fields
through = models.Book.authors.through
out["book_authors"] = sorted(list(p) for p in through.objects.values_list("book_id", "author_id"))
json.dump(out, sys.stdout)
""".replace("MODELS_HERE", repr(MODELS))

CPU = """
import resource, subprocess, sys
subprocess.run([sys.executable, "-m", "orm_fixture.build", sys.argv[1], "--variant", sys.argv[2]], check=True,
               capture_output=True)
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(use.ru_utime + use.ru_stime)
"""


def _host(seed: int, fields: dict[str, list[str]]) -> dict[str, list]:
    w = world(seed)
    out = {}
    for name in MODELS:
        out[name] = [[None if r.get(f) is None else str(r[f]) for f in fields[name]] for r in w.rows[name]]
    out["book_authors"] = sorted([b, a] for b, a in w.book_authors)
    return out


async def test_the_orm_reads_the_seeded_world_the_evaluator_reads(backend, image):
    env = {**SESSION_ENV, "PYTHONPATH": CONTAINER_RUNTIME}
    async with backend.sandbox(image) as sb:
        for seed in (SEEDED[0], SEEDED[-1]):
            await sb.write_files({"/tmp/dump.py": DUMP})
            ran = await sb.exec([CONTAINER_PYTHON, "/tmp/dump.py"], env={**env, "ORM_FIXTURE_DB": image_db(seed)}, timeout=120)
            assert ran.exit_code == 0, ran.stderr[-800:]
            got = json.loads(ran.stdout)
            fields = {name: got.pop(name + ".fields") for name in MODELS}
            assert "mentor_id" in fields["Author"] and "sold_at" in fields["Sale"] and "role" in fields["Contribution"]
            assert got == _host(seed, fields), f"fixture seed {seed}: the image's rows are not the host's world"


async def test_a_seeded_world_builds_in_the_container_in_little_cpu_time(backend, image):
    env = {**SESSION_ENV, "PYTHONPATH": CONTAINER_RUNTIME}
    async with backend.sandbox(image) as sb:
        await sb.write_files({"/tmp/cpu.py": CPU})
        ran = await sb.exec([CONTAINER_PYTHON, "/tmp/cpu.py", SESSION_DB, str(SEEDED[0])], env=env, timeout=300)
        assert ran.exit_code == 0, ran.stderr[-800:]
        seconds = float(ran.stdout.strip())
        assert seconds < 20, f"building fixture seed {SEEDED[0]} took {seconds:.1f} s of CPU"
        digest = await sb.exec([CONTAINER_PYTHON, "-m", "orm_fixture.build", "--digest", image_db(SEEDED[0])], env=env)
        rebuilt = await sb.exec([CONTAINER_PYTHON, "-m", "orm_fixture.build", "--digest", SESSION_DB], env=env)
        assert digest.stdout.strip() == rebuilt.stdout.strip(), "a rebuild of the seeded world is not the image's"


async def test_generated_queries_over_seeded_worlds_give_the_evaluators_rows_in_the_image(backend, image):
    from sandbox_env.stages.generate_orm import admit, candidates, execute, same_rows

    sample = candidates(seed=5, count=12, log=lambda *_: None, seeded=True)
    assert sample and all(set(c["screened"]) <= set(SEEDED) for c in sample)
    for c in sample:  # the first fixture seed of its split's pool only: at most four containers
        c["screened"] = dict(sorted(c["screened"].items())[:1])
    results = await execute(backend, image, sample, log=lambda *_: None)
    admitted = 0
    for n, c in enumerate(sample):
        ok, _ = admit(n, c, results)  # what verification leaves out, it leaves out: only the admitted rows count
        for v, rows in ok.items():
            assert same_rows(rows, c["screened"][v])
        admitted += len(ok)
    assert admitted, "no candidate over the seeded worlds survived verification"
