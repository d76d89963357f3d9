"""Compile the task sources into the shipped dataset, and verify every task for real.

A thin command over sandbox_env/verify/ (see sandbox_env/stages/build.py):

    python build_tasks.py                     # compile sandbox_env/tasks → sandbox_env/data/tasks.jsonl
    python build_tasks.py --verify            # also run references and controls in real containers
    python build_tasks.py --verify --family orm --task orm_agg_01 --concurrency 4
    python build_tasks.py --verify --mutants  # also every reference's mutants and the sensitivity line
"""

import sys

from sandbox_env.stages.build import main

if __name__ == "__main__":
    sys.exit(main())
