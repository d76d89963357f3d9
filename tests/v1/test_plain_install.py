"""The environment package installed as a user would, beside the verifiers builds that people run it with.

- A plain install: the wheel alone into a fresh venv, which resolves verifiers 0.4.x from the
  index and brings no `uv`; then `websandbox eval` of a task of each family with the
  network cut off (a network namespace of its own: loopback only), a fresh HOME and empty
  caches. Every rollout scores 1.0: nothing is resolved, downloaded or installed at run time.
- Beside the build prime-rl pins (tests/v1/stand_in.py: version `0.3.1.dev62`, the v1 API, its
  eval script named `eval`): the resolver admits it, the v1 door loads, every prime-rl config
  the docs give loads its taskset as prime-rl's orchestrator does, and `websandbox eval` runs
  v1's eval by module and says under which name this verifiers installs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from stand_in import PINNED_VERSION, build_stand_in

from sandbox_env.constants import ENV_ID, REPO_ROOT
from sandbox_env.sandbox.docker import leaked_containers
from sandbox_env.viewer import load_run
from tests.wheel_kit import run_shown, uv_path

TASKS = ["orm_adv_01", "dj01", "fastapi_body_embed"]
DOCS_WITH_PRIME_RL_CONFIGS = ["environments/websandbox/README.md", "docs/multi-host.md"]


def _venv_with(root: Path, *requirements: str) -> Path:
    uv = uv_path()
    venv = root / "venv"
    run_shown([uv, "venv", "--python", sys.executable, str(venv)], root)
    run_shown([uv, "pip", "install", "--python", str(venv / "bin" / "python"), *requirements], root)
    return venv


def _python(venv: Path, code: str, cwd: Path) -> str:
    return run_shown([str(venv / "bin" / "python"), "-c", code], cwd, _plain_env(cwd)).stdout


def _plain_env(home: Path) -> dict[str, str]:
    """A user's shell: no venv activated, no uv on PATH, a HOME and caches of its own."""
    keep = {k: v for k, v in os.environ.items() if k in ("DOCKER_HOST", "LANG", "LC_ALL", "TERM", "CI")}
    return {
        **keep,
        "PATH": "/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin",
        "HOME": str(home / "home"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "UV_CACHE_DIR": str(home / "uv-cache"),
        "PIP_CACHE_DIR": str(home / "pip-cache"),
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run_shown([uv_path(), "build", "--wheel", "--out-dir", str(out), str(REPO_ROOT / "environments" / ENV_ID)], out)
    (built,) = out.glob("websandbox-*.whl")
    return built


@pytest.fixture(scope="module")
def plain(tmp_path_factory, wheel) -> Path:
    root = tmp_path_factory.mktemp("plain")
    assert REPO_ROOT not in root.parents
    return _venv_with(root, str(wheel))


@pytest.fixture(scope="module")
def pinned(tmp_path_factory, wheel) -> Path:
    root = tmp_path_factory.mktemp("pinned")
    stand_in = build_stand_in(root)
    return _venv_with(root, str(wheel), str(stand_in))


def _offline(cmd: list[str]) -> list[str]:
    """`cmd` in a network namespace of its own with only loopback up (needs root, as CI has)."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true and `unshare -n` is not permitted here: the rollout cannot be cut off the network")
        pytest.skip("`unshare -n` is not permitted for this user: run as root (CI does)")
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "offline", *cmd]


def _scores(run_dir: Path) -> dict[str, float | None]:
    """Task id -> reward of a saved v1 run (None for a rollout that errored), read by the viewer's reader."""
    return {r["task_id"]: None if r["error"] else r["reward"] for r in load_run(run_dir).rollouts}


def test_a_plain_install_resolves_verifiers_0_4_and_brings_no_uv(plain, tmp_path):
    found = json.loads(
        _python(plain, "import json, importlib.metadata as m; print(json.dumps(m.version('verifiers')))", tmp_path)
    )
    assert found.startswith("0.4."), found
    assert not (plain / "bin" / "uv").exists(), "uv came with the plain install: the test would not show it is not needed"


@pytest.mark.docker
def test_a_plain_install_scores_every_family_with_no_network_and_empty_caches(plain, image, tmp_path):
    env = _plain_env(tmp_path)
    cmd = [str(plain / "bin" / "websandbox"), "eval", "-a", json.dumps({"task_ids": TASKS, "image": image}), "-c", "3"]
    proc = run_shown(_offline(cmd), tmp_path, env, timeout=1800)
    (run,) = [p for p in (tmp_path / "outputs" / "v1").iterdir() if p.is_dir()]
    assert _scores(run) == dict.fromkeys(TASKS, 1.0), proc.stdout[-3000:]
    assert not (tmp_path / "home" / ".local" / "bin" / "uv").exists()  # nothing installed uv behind the user's back
    assert leaked_containers() == []


def test_the_resolver_admits_the_build_prime_rl_pins_and_the_v1_door_loads_on_it(pinned, tmp_path):
    probe = (
        "import json, importlib.metadata as m\n"
        "from sandbox_env.doors.stack import installed_stack\n"
        "import websandbox\n"
        "print(json.dumps([m.version('verifiers'), installed_stack(), sorted(websandbox.__all__)]))\n"
    )
    version, stack, exported = json.loads(_python(pinned, probe, tmp_path).strip().splitlines()[-1])
    assert version == PINNED_VERSION
    assert stack == "v1"
    assert exported == ["WebSandboxEnv", "WebSandboxHarness", "WebSandboxTaskset"]


def _documented_sources() -> list[dict]:
    sources = []
    for doc in DOCS_WITH_PRIME_RL_CONFIGS:
        for block in re.findall(r"```toml\n(.*?)```", (REPO_ROOT / doc).read_text(), re.S):
            if "[[orchestrator.train.source]]" in block:
                sources += tomllib.loads(block)["orchestrator"]["train"]["source"]
    return sources


def test_every_prime_rl_config_the_docs_give_loads_its_taskset_beside_the_pinned_build(pinned, tmp_path):
    sources = _documented_sources()
    assert len(sources) >= 3, "the docs' prime-rl configs were not found"
    probe = (
        "import json, sys\n"
        "import verifiers.v1 as vf\n"
        "counts = []\n"
        "for source in json.loads(sys.argv[1]):\n"
        "    config = vf.resolve_env_config(source['env'])  # what prime-rl's EnvConfig narrows `env` to\n"
        "    counts.append(len(list(vf.load_taskset(config.taskset))))  # as its orchestrator loads the tasks\n"
        "print(json.dumps(counts))\n"
    )
    out = run_shown([str(pinned / "bin" / "python"), "-c", probe, json.dumps(sources)], tmp_path, _plain_env(tmp_path)).stdout
    counts = json.loads(out.strip().splitlines()[-1])
    assert len(counts) == len(sources) and all(n > 0 for n in counts), counts


@pytest.mark.docker
def test_websandbox_eval_runs_v1_eval_by_module_beside_the_pinned_build_and_says_its_name(pinned, image, tmp_path):
    env = _plain_env(tmp_path)
    cmd = [str(pinned / "bin" / "websandbox"), "eval", "-a", json.dumps({"task_ids": TASKS[:1], "image": image})]
    proc = run_shown(cmd, tmp_path, env, timeout=900)
    assert "installed as `eval`" in proc.stdout
    (run,) = [p for p in (tmp_path / "outputs" / "v1").iterdir() if p.is_dir()]
    assert _scores(run) == {TASKS[0]: 1.0}
    assert leaked_containers() == []
