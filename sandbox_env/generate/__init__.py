"""Task generators: the orm query grammar, repair tasks from broken deliverables, composed fastapi apps.

Modules, one job each:
  schema      the bookshop's fields, relations and English nouns, as the generator sees them
  fixture     a fixture variant's rows as plain Python (the evaluator's world)
  tree        the grammar's dataclasses, canonical form, tree hash and structural signature
  columns     output column types (what the reference formats and the spec promises)
  evaluate    expected rows from a tree without the ORM
  render_orm  the ORM reference cell of a tree
  render_spec the English of a tree (title, spec, columns, order) and the traps it states
  sample      candidate trees from a seed, constants from the data, and the cheap pre-screen
  measure     the structural score, its thresholds and the difficulty label
  store       generated tasks as compact JSON lines: writing, reading, task ids and splits
  task_lines  the JSON-lines file every store keeps (one record a line, sorted by task id)
  repair_logic  repair tasks' pure parts: candidates, the report from grader evidence, measures
  repair_store  repair tasks as JSON lines, and how a line becomes a task over its base task
  compose_logic composed fastapi tasks' pure parts: parts, the composed app, its checks, spec and wrong answers
  compose_store composed tasks as JSON lines, and how a line becomes a task row

Verification by execution (the image's Django over the image's fixture databases, mutants)
lives in sandbox_env/stages/generate_orm.py, stages/repair.py and stages/compose.py; this package never starts a
container.
"""

# the task shapes the sampler draws (`websandbox generate --shape` names one); `setop`, `cast` and `row_number`
# are drawn only when named, so the mixed stream's draws (sample.SHAPES) stay the ones the stored tasks came from
SHAPE_NAMES = ("filter", "group", "row_agg", "subquery", "window", "setop", "cast", "row_number")
