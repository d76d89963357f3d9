"""The image's wheels follow the engine's architecture: an arm64 engine (Apple Silicon, Graviton) gets aarch64 wheels."""

from __future__ import annotations

import subprocess

import pytest

from sandbox_env.constants import IMAGES_DIR
from sandbox_env.rollout.image import wheel_download_command, wheel_platforms
from sandbox_env.sandbox.registry import backend_tools


def _pinned_names() -> set[str]:
    names = set()
    for line in (IMAGES_DIR / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(line.split("==", 1)[0].split("[", 1)[0].strip().lower().replace("-", "_").replace(".", "_"))
    return names


@pytest.mark.parametrize(
    ("reported", "arch"), [("x86_64", "x86_64"), ("amd64", "x86_64"), ("aarch64", "aarch64"), ("arm64", "aarch64")]
)
def test_each_name_an_engine_gives_its_architecture_picks_that_architectures_manylinux_tags(reported, arch):
    platforms = wheel_platforms(reported)
    assert platforms and all(p.endswith(f"_{arch}") for p in platforms)


def test_an_architecture_without_manylinux_wheels_is_refused_with_what_to_do():
    with pytest.raises(ValueError, match="x86_64 or aarch64"):
        wheel_platforms("riscv64")


def test_the_docker_backend_reports_its_engines_architecture():
    assert wheel_platforms(backend_tools("docker").architecture())  # this engine's is one the image can be built for


def test_the_pinned_wheel_set_resolves_for_an_arm64_engine_without_building(tmp_path):
    dest = tmp_path / "wheels"
    subprocess.run(wheel_download_command(dest, wheel_platforms("arm64"), extra=("--quiet",)), check=True, timeout=900)
    wheels = [p.name for p in dest.glob("*.whl")]
    got = {name.split("-", 1)[0].lower() for name in wheels}
    assert _pinned_names() <= got, sorted(_pinned_names() - got)
    compiled = [w for w in wheels if not w.endswith("-none-any.whl")]
    assert compiled and all("aarch64" in w for w in compiled), compiled  # pydantic-core and the like, built for arm64
