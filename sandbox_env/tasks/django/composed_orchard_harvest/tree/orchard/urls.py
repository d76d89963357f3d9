"""The routes of the orchard app: write them (see the task)."""
