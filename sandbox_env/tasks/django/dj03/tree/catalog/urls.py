"""URL patterns of the catalog: write them here (see the task)."""
