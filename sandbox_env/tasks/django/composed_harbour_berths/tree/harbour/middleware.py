"""HarbourMiddleware: write it (see the task)."""
