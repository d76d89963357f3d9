"""WeekConverter: write it (see the task)."""
