"""The task pipeline's stages: one module a stage of `websandbox tasks STAGE` (cli/task_stages.py).

A stage is a command that makes, verifies or stores tasks by combining the parts below it:
drawing and rendering in `generate/` (pure, no containers), verification by execution in
`verify/` (references as tool calls, controls, mutants, scripted rollouts), the stores in
`generate/*_store.py`. Each module is named after its stage:

- `compile`: the task sources and the stores compiled into the dataset rows (no containers);
- `build`: `websandbox tasks build [--verify [--mutants]]` — compile and write the dataset,
  and verify every task through the real grading path;
- `generate_orm`: `websandbox tasks generate` and `reverify` — the generated orm tasks;
- `generate_fastapi`, `generate_django`: draw, verify and store generated tasks of a family;
- `repair`: make, verify and store repair tasks;
- `compose`: compose, verify and store composed fastapi tasks.

Nothing below this package imports it (tests/test_import_rules.py): verification never
depends on how a stage drives it.
"""
