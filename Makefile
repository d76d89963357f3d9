# The two jobs a new user runs: `make eval` (the main job) and `make test`.
# Each sets everything up first: a venv with uv, the project, the verifiers
# environment (vf-install), the compiled dataset and the runtime image.
VENV := .venv
PY := $(VENV)/bin/python
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export VIRTUAL_ENV := $(CURDIR)/$(VENV)
# Installs write bytecode: where PYTHONDONTWRITEBYTECODE=1, a venv without .pyc files makes every
# process compile verifiers' whole import chain again (about 40% of `websandbox eval`'s start-up).
export UV_COMPILE_BYTECODE := 1

.PHONY: setup image eval test lint gc bench

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml environments/websandbox/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade uv
	uv pip install -q -p $(PY) -e ".[dev]"
	vf-install websandbox
	touch $@

image: setup
	$(PY) build_tasks.py
	websandbox build-image

eval: image
	websandbox eval

test: image
	$(PY) -m pytest -q --durations=15

lint: setup
	ruff check sandbox_env tests build_tasks.py environments bench

gc: setup
	websandbox gc

bench: image
	$(PY) bench/bench.py
