# The jobs a new user runs: `make eval-v1` (the main job, on verifiers 0.4.x, what a plain
# install gets and prime-rl speaks; venv .venv-v1) and `make test-all` (every test of both
# stacks but the slow tier: what CI runs; `make test-full` adds the slow tier). The classic stack (verifiers 0.3.x, venv .venv) has `make eval` and `make test`;
# `make test-v1` runs the v1 suite alone. Each sets everything up first:
# a venv with uv, the project, the verifiers environment, the compiled dataset and the
# runtime image.
VENV := .venv
PY := $(VENV)/bin/python
VENV_V1 := .venv-v1
PY_V1 := $(VENV_V1)/bin/python
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export VIRTUAL_ENV := $(CURDIR)/$(VENV)
# verifiers 0.3.1 carries both APIs (verifiers.legacy and verifiers.v1), and websandbox's commands
# run v1 wherever it exists: the classic targets pick the classic stack (sandbox_env/doors/stack.py)
export WEBSANDBOX_STACK := classic
# the v1 targets put their own venv first
V1_ENV := PATH=$(CURDIR)/$(VENV_V1)/bin:$(PATH) VIRTUAL_ENV=$(CURDIR)/$(VENV_V1) WEBSANDBOX_STACK=v1
# Installs write bytecode: where PYTHONDONTWRITEBYTECODE=1, a venv without .pyc files makes every
# process compile verifiers' whole import chain again (about 40% of `websandbox eval`'s start-up).
# The checkout itself (installed editable) is compiled by `image`, so edits are compiled again.
export UV_COMPILE_BYTECODE := 1
COMPILE_CHECKOUT = -m compileall -q -x '/(tasks|outputs)/' sandbox_env environments/websandbox

.PHONY: setup setup-v1 image image-v1 browser eval eval-v1 test test-v1 test-all test-slow test-full lint gc bench stage-push

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml environments/websandbox/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade uv
	uv pip install -q -p $(PY) -e ".[dev,classic]"
	vf-install websandbox
	touch $@

# verifiers 0.4 has no vf-install: the environment package is installed like any package.
setup-v1: $(VENV_V1)/.installed

$(VENV_V1)/.installed: pyproject.toml environments/websandbox/pyproject.toml
	test -x $(PY_V1) || python3 -m venv $(VENV_V1)
	$(PY_V1) -m pip install -q --upgrade uv
	$(VENV_V1)/bin/uv pip install -q -p $(PY_V1) -e ".[dev,v1]" -e environments/websandbox
	touch $@

image: setup
	$(PY) $(COMPILE_CHECKOUT)
	$(PY) build_tasks.py
	websandbox build-image

eval: image
	websandbox eval

# The viewer's browser test drives Debian's headless Chromium (nothing is downloaded by the test).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
	  $$SUDO apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; }

# The slow tier (`-m slow`, tests/conftest.py says what belongs there) repeats at scale or under
# contrived load a verdict a quicker test of the default run already shows; CI leaves it out.
test: image browser
	$(PY) -m pytest -q --durations=15 -m "not slow"

test-slow: image browser
	$(PY) -m pytest -q --durations=15 -m slow

image-v1: setup-v1
	$(V1_ENV) $(PY_V1) $(COMPILE_CHECKOUT)
	$(V1_ENV) $(PY_V1) build_tasks.py
	$(V1_ENV) $(VENV_V1)/bin/websandbox build-image

eval-v1: image-v1
	$(V1_ENV) $(VENV_V1)/bin/websandbox eval

test-v1: image-v1
	$(V1_ENV) $(PY_V1) -m pytest -q --durations=10 tests/v1

# every test of both stacks, each in its own venv, but the slow tier (what .ci/run runs)
test-all: test test-v1

# the full verification: every test, the slow tier too
test-full: test test-slow test-v1

lint: setup
	ruff check sandbox_env tests build_tasks.py environments bench
	ruff format --check sandbox_env tests build_tasks.py environments bench

gc: setup
	websandbox gc

bench: image
	$(PY) bench/bench.py

# A self-contained folder for `prime env push` (sandbox_env/cli/hub.py): make stage-push DIR=/tmp/websandbox-push
stage-push: setup
	@test -n "$(DIR)" || { echo "usage: make stage-push DIR=a-new-folder (then: cd DIR && prime env push)"; exit 2; }
	$(PY) build_tasks.py
	websandbox stage-push $(DIR)

# Podman as a host (README, "Podman"; sandbox_env/sandbox/podman.py): installs Podman and catatonit (its
# `--init`) where missing, starts `podman system service` on WEBSANDBOX_PODMAN_HOST's socket (default: the
# one `podman info` names) when nothing answers there, and copies the runtime image from Docker's storage
# into Podman's. Each step is skipped when already done.
.PHONY: podman
PODMAN_URL = $(PY) -c 'from sandbox_env.sandbox.podman import podman_url; print(podman_url())'
PODMAN_PING = $(PY) -c 'from sandbox_env.sandbox.podman import podman_client; podman_client()' 2>/dev/null
podman: image
	@command -v podman >/dev/null && test -x /usr/libexec/podman/catatonit || { \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
	  $$SUDO apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman catatonit; }
	@url=$$($(PODMAN_URL)); log=$${XDG_RUNTIME_DIR:-/tmp}/websandbox-podman.log; \
	case "$$url" in unix://*) ;; *) echo "make podman starts a service on a unix:// socket, not $$url"; exit 2;; esac; \
	$(PODMAN_PING) || { \
	  echo "starting podman system service on $$url (log: $$log)"; \
	  mkdir -p "$$(dirname "$${url#unix://}")"; \
	  cd / && setsid nohup podman system service --time=0 "$$url" >"$$log" 2>&1 </dev/null & \
	  for i in $$(seq 50); do $(PODMAN_PING) && break; sleep 0.2; done; \
	  $(PODMAN_PING) || { echo "Podman's service did not answer on $$url: see $$log"; exit 1; }; }
	@tag=$$($(PY) -c 'from sandbox_env.rollout.image import image_tag; print(image_tag())'); \
	podman image exists "$$tag" || { echo "copying $$tag from Docker into Podman's storage"; \
	  docker save "$$tag" | podman load -q >/dev/null && podman image exists "$$tag"; }
