"""The author report: write author_report() here (see the task)."""
