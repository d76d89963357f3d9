"""The views project/urls.py routes to: board, book, cancel. Write them (see the task)."""
