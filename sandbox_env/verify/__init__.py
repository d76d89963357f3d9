"""Task verification: controls, mutants and sensitivity reports (build_tasks.py --verify)."""
