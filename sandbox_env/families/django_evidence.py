"""Tamper evidence of a django grading run, read on the host.

Three sources, each checked against the others:

- the frames the runner streamed while it ran (`read_frames`): one per finished test
  (`"tested": [nodeid, outcome]`) and one per problem its guard found (`"alarm"`), sent
  when they happened, so that nothing done later in the process takes them back;
- the final report: the recorder's outcomes and the guard's end-of-run integrity section;
- the canaries of the suite, whose outcomes only the host knows.

`problems(...)` lists every disagreement; any one of them makes the grade `tampered`.
A final report whose outcomes differ from the streamed ones, or that lacks the integrity
section, was not written by the runner's last step (e.g. forged before an early exit).

The code under test shares the runner's process, so once it has run (the "started"
frame) it can write anything on the channel: no JSON, JSON nested past the parser's
limit, a stage the runner never sends, fields of other types. Nothing read here may raise
on such a frame (an exception in grading is a harness fault: the wrong answer would be
rescheduled instead of scored), so frames are parsed with RecursionError caught and a
report's shape is checked (`report_problem`) before anything reads its fields.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sandbox_env.families.django_suite import Suite
from sandbox_env.text import valid_json_text

_NONCE = re.compile(r"[0-9a-f]{32}")
MAX_FRAMES = 20000


def read_frames(stdout: str, nonce: str | None = None) -> list[dict[str, Any]]:
    """Every complete frame on the grader's stdout, framed by `nonce` (the run's, which the host made).

    Without a nonce, the last nonce-like line is taken (for reports read back without
    their run). With one, a line that only looks like a nonce (code under test can write
    on the channel) frames nothing, so it cannot hide the runner's own frames.
    """
    lines = stdout.split("\n")
    if nonce is None:
        nonce = next((ln for ln in reversed(lines) if _NONCE.fullmatch(ln)), None)
    if nonce is None:
        return []
    frames: list[dict[str, Any]] = []
    for i in range(len(lines) - 2):
        if lines[i] == nonce and lines[i + 2] == nonce and lines[i + 1] != nonce:
            try:
                frame = json.loads(lines[i + 1])
            except (ValueError, RecursionError):
                continue
            if isinstance(frame, dict):
                frames.append(valid_json_text(frame))
                if len(frames) >= MAX_FRAMES:
                    break
    return frames


STAGES = ("harness_error", "started", "finished")
_TEXT_MAPS = ("outcomes", "collection_errors", "failures")


def _text_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def report_problem(report: dict[str, Any]) -> str | None:
    """None when a report has the shape the runner gives it, else what is wrong with it.

    Only the fields the host reads are checked: the stage, and for a finished run the
    recorder's maps (node id -> text) and the collected ids (at most MAX_FRAMES each, as
    many as the frames read), the imports, the exit code and the crash and output texts.
    """
    stage = report.get("stage")
    if not (isinstance(stage, str) and stage in STAGES):
        what = repr(stage[:80]) if isinstance(stage, str) else f"a {type(stage).__name__}"
        return f"a report of stage {what}, which the runner never sends"
    if stage != "finished":
        return None
    for key in _TEXT_MAPS:
        if report.get(key) is not None and not _text_map(report[key]):
            return f"its {key!r} is not a map of node ids to texts"
    collected = report.get("collected")
    if collected is not None and not (isinstance(collected, list) and all(isinstance(c, str) for c in collected)):
        return "its 'collected' is not a list of node ids"
    for key in (*_TEXT_MAPS, "collected"):
        if len(report.get(key) or ()) > MAX_FRAMES:  # each real test is looked up in them: bounded host work
            return f"its {key!r} holds more than {MAX_FRAMES} entries"
    if report.get("imported") is not None and not isinstance(report["imported"], dict):
        return "its 'imported' is not a map of module names"
    code = report.get("exit_code")
    if code is not None and type(code) is not int:
        return f"its exit code (a {type(code).__name__}) is not a number"
    for key in ("crash", "output_tail"):
        if report.get(key) is not None and not isinstance(report[key], str):
            return f"its {key!r} is not a text"
    return None


def outcome_of(nodeid: str, outcomes: dict[str, str]) -> str | None:
    """One outcome for a node id, over its parametrized instances if it has any."""
    found = [o for nid, o in outcomes.items() if nid == nodeid or nid.startswith(nodeid + "[")]
    if not found:
        return None
    return "passed" if all(o == "passed" for o in found) else next(o for o in found if o != "passed")


def canary_problems(report: dict[str, Any], suite: Suite) -> list[str]:
    """Canaries that did not fail as they must.

    A budget canary must fail whatever the submission does. A value canary must fail when
    its original passed; when the original did not pass, its outcome proves nothing. A
    canary in a module that did not collect is exempt (its real neighbours fail with it).
    """
    outcomes = report.get("outcomes") or {}
    errors = report.get("collection_errors") or {}
    problems = []
    for nodeid, canary in suite.canaries.items():
        if suite.module_of(nodeid) in errors:
            continue
        got = outcome_of(nodeid, outcomes)
        if got in ("failed", "error"):
            continue
        if got is None:
            problems.append(f"canary {nodeid} has no outcome")
            continue
        original = suite.real.get(canary.original)
        if canary.kind == "value" and outcome_of(original or "", outcomes) != "passed":
            continue
        problems.append(f"canary {nodeid} ({canary.kind} clone of a real test) must fail but ended {got}")
    return problems


def stream_problems(report: dict[str, Any], frames: list[dict[str, Any]]) -> list[str]:
    """The final report's outcomes against the outcomes streamed while the tests ran."""
    streamed: dict[str, str] = {}
    problems = []
    for frame in frames:
        tested = frame.get("tested")
        if not (isinstance(tested, list) and len(tested) == 2 and all(isinstance(x, str) for x in tested)):
            continue
        nodeid, outcome = tested
        if streamed.get(nodeid, outcome) != outcome:
            problems.append(f"{nodeid} was reported both {streamed[nodeid]} and {outcome}")
        streamed[nodeid] = outcome
    outcomes = report.get("outcomes") or {}
    for nodeid, outcome in outcomes.items():
        if nodeid not in streamed:
            problems.append(f"the report has an outcome for {nodeid} that the run never streamed")
        elif streamed[nodeid] != outcome:
            problems.append(f"the report says {nodeid} {outcome}; the run streamed {streamed[nodeid]}")
    for nodeid in streamed:
        if nodeid not in outcomes:
            problems.append(f"the report lost the outcome of {nodeid}")
    return problems


def loaded(frames: list[dict[str, Any]]) -> bool:
    """Whether the runner streamed that a deliverable module was about to run (code under test ran)."""
    return any(isinstance(frame.get("loading"), str) for frame in frames)


def alarm_problems(frames: list[dict[str, Any]]) -> list[str]:
    return [f"guard: {frame['alarm']}" for frame in frames if isinstance(frame.get("alarm"), str)]


def integrity_problems(report: dict[str, Any]) -> list[str]:
    """The guard's end-of-run section of a finished report."""
    section = report.get("integrity")
    if not isinstance(section, dict) or not isinstance(section.get("problems"), list):
        return ["the report lacks the runner's integrity section"]
    if not section.get("armed"):
        return ["the runner's guard was never armed"]
    return [f"guard: {p}" for p in section["problems"] if isinstance(p, str)]


def problems(report: dict[str, Any], suite: Suite, frames: list[dict[str, Any]] | None) -> list[str]:
    """Every piece of tamper evidence of a finished run (frames None: only the report is known)."""
    found = canary_problems(report, suite) + integrity_problems(report)
    if frames is not None:
        found = alarm_problems(frames) + stream_problems(report, frames) + found
    seen: set[str] = set()
    return [p for p in found if not (p in seen or seen.add(p))]
