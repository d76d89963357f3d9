"""week_report and orchard_detail: write them (see the task)."""
