"""HireForm: write it (see the task)."""
