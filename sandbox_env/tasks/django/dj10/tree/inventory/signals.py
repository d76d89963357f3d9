"""Signals of the inventory: write stock_low and the receivers here (see the task)."""
