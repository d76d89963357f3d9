"""Keeps Doctor.rostered_hours right and sends the shift messages: write it (see the task)."""
