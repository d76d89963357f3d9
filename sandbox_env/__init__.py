"""websandbox: a verifiers environment in which a model writes real Django and FastAPI code."""

__version__ = "0.1.0"
