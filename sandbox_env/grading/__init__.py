"""Gradings: fresh sandboxes, the grader programs shipped into them, their reports."""
