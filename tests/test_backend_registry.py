"""Backends by name: the `backend` setting picks a registered backend; an unknown name says which exist."""

from __future__ import annotations

import pytest

from sandbox_env.rollout.core import Rollouts, SandboxSettings
from sandbox_env.sandbox import Evidence, Limits
from sandbox_env.sandbox.registry import BackendTools, backend_names, backend_tools, make_backend, register_backend


def test_an_unknown_backend_name_is_refused_with_the_names_that_exist():
    with pytest.raises(ValueError, match="unknown sandbox backend 'kubernetes'.*docker"):
        make_backend("kubernetes")


def test_a_registered_backend_is_made_by_name_with_the_settings_limits_and_budget():
    made = []

    class Recorded:
        def __init__(self, limits: Limits, *, max_sandboxes: int | None) -> None:
            made.append((limits, max_sandboxes))

        def keep_warm(self, image: str, size: int) -> None:
            made.append(("warm", image, size))

        def evidence(self) -> Evidence:
            return Evidence(usage=True, limits_changed=True, ended_from_inside=True)

    register_backend("recorded", Recorded)
    assert "recorded" in backend_names() and "docker" in backend_names()
    settings = SandboxSettings(image="an-image", backend="recorded", cpus=2.0, max_sandboxes=5, pool_size=0)
    Rollouts(settings)
    assert made[0] == (Limits(cpus=2.0), 5) and made[1] == ("warm", "an-image", 0)


def test_a_backend_name_must_be_a_plain_word():
    with pytest.raises(ValueError, match="letters, digits"):
        register_backend("../docker", lambda limits, max_sandboxes=None: None)


class _Blind:
    """A backend that can prove nothing about its sandboxes (as an engine on another host)."""

    def __init__(self, limits: Limits, *, max_sandboxes: int | None) -> None:
        self.torn_down = False

    def evidence(self) -> Evidence:
        return Evidence()

    def keep_warm(self, image: str, size: int) -> None:
        pass

    def teardown(self) -> None:
        self.torn_down = True


def test_a_backend_that_cannot_prove_whose_a_fault_is_is_refused_when_evidence_is_required():
    register_backend("blind", _Blind)
    with pytest.raises(ValueError, match="cannot prove .*require_evidence=False"):
        Rollouts(SandboxSettings(image="an-image", backend="blind", pool_size=0, require_evidence=True))
    rollouts = Rollouts(SandboxSettings(image="an-image", backend="blind", pool_size=0))  # an eval may use it, warned
    assert rollouts.sandboxes.evidence().missing() != []


@pytest.mark.docker
def test_a_docker_engine_on_this_machine_declares_every_kind_of_evidence():
    backend = make_backend("docker")
    try:
        assert backend.evidence().missing() == []
    finally:
        backend.teardown()


def test_a_backends_tools_are_asked_for_by_name_and_a_backend_without_them_is_named():
    tools = BackendTools(
        where=lambda: "here",
        gc=lambda **_: None,
        settle_run=lambda run_id: [run_id],
        image_exists=lambda tag: tag == "there:1",
        choose_base=lambda base, say: base,
        build_image=lambda context, tag, base, say: None,
    )
    register_backend("tooled", _Blind, tools)
    assert backend_tools("tooled") is tools and backend_tools("tooled").settle_run("r1") == ["r1"]
    register_backend("toolless", _Blind)
    with pytest.raises(ValueError, match="'toolless' provides no cleanup or image tools.*docker"):
        backend_tools("toolless")


def test_the_docker_backends_tools_are_its_cleanup_and_image_distribution():
    tools = backend_tools("docker")
    assert tools.where().startswith(("unix://", "tcp://", "ssh://", "npipe://"))
    assert tools.unavailable and all(issubclass(e, BaseException) for e in tools.unavailable)
