"""The ORM fixture: a small bookshop database that every orm task queries.

Settings in `settings`, models in the `shop` app, the hard-coded data in `data`,
and `build.build_database(path)` that makes the SQLite file from nothing (no
migrations on disk, no clock, no randomness). Runs inside the image only.
"""
