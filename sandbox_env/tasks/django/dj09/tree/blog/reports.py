"""The activity report: write post_activity() here (see the task)."""
