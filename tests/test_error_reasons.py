"""An errored rollout's reason names the first real cause in its chain, not a wrapper's empty message."""

from __future__ import annotations

from sandbox_env.text import described_error


def test_an_errors_description_names_the_first_cause_that_says_something():
    class ModelError(Exception):
        pass

    try:
        try:
            raise RuntimeError("HTTP 500: type must be string, but is null")
        except RuntimeError as cause:
            raise ModelError() from cause
    except ModelError as wrapped:
        said = described_error(wrapped)
    assert said == "ModelError -> RuntimeError: HTTP 500: type must be string, but is null"
    assert described_error(ValueError("plain")) == "ValueError: plain"
