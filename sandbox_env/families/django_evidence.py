"""Tamper evidence of a django grading, read on the host.

Three sources, each checked against the others:

- the frames the runner streamed while it ran (`read_frames`): one per finished test
  (`"tested": [nodeid, outcome]`) and one per problem its guard found (`"alarm"`), sent
  when they happened, so that nothing done later in the process takes them back;
- the final report: the recorder's outcomes and the guard's end-of-run integrity section;
- the canaries of the suite, whose outcomes only the host knows;
- the observations (`observation_results`): every comparison assertion of the frozen tests
  sends its operands out as plain data, the host puts its expected values (which never
  entered the process) back in their holes and decides the comparison. A test that passed
  in the process but has a comparison that does not hold on the host, or lacks one that
  runs whenever it passes, failed.

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

import dataclasses
import datetime
import decimal
import json
import re
import uuid
from typing import Any

from sandbox_env.families.django_suite import Site, Suite
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


def problems(
    report: dict[str, Any], suite: Suite, frames: list[dict[str, Any]] | None, judged: dict[str, Any] | None = None
) -> list[str]:
    """Every piece of tamper evidence of a finished run (frames None: only the report is known).

    `judged` is the report with the host's observations applied (with_observations): canaries
    are read from it; the streamed outcomes are compared with the report as sent.
    """
    found = canary_problems(judged or report, suite) + integrity_problems(report)
    if frames is not None:
        found = alarm_problems(frames) + stream_problems(report, frames) + found
    seen: set[str] = set()
    return [p for p in found if not (p in seen or seen.add(p))]


# -- observations -------------------------------------------------------------------------

HOST_OPS = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}


@dataclasses.dataclass(frozen=True)
class _Ref:
    """An opaque object of one observation: equal to itself only."""

    ref: int


@dataclasses.dataclass(frozen=True)
class _ModelRef:
    """A Django model instance: equal to one of the same concrete model and primary key."""

    label: str
    pk: Any


class _Forged(Exception):
    """An observation no runner sends (a hole where the host put none, a shape it never writes)."""


def _decode(x: Any, site: Site, found: list[int], opaque: list[str]) -> Any:
    if x is None or type(x) in (bool, str):
        return x
    if type(x) is list:
        return [_decode(v, site, found, opaque) for v in x]
    if type(x) is not dict or len(x) != 1:
        raise _Forged(f"a value of shape {type(x).__name__}")
    ((tag, v),) = x.items()
    if tag == "hole":
        if type(v) is not int or not 0 <= v < len(site.holes):
            raise _Forged("a hole the host did not make")
        found.append(v)
        return site.holes[v]
    if tag in ("tuple", "set", "fset", "dict", "opaque", "model") and type(v) is not list:
        raise _Forged(f"a {tag} that is no list")
    if tag == "opaque":
        if len(v) != 2 or type(v[0]) is not str or type(v[1]) is not int:
            raise _Forged("an opaque value of another shape")
        opaque.append(v[0][:80])
        return _Ref(v[1]) if v[1] >= 0 else _Ref(-1 - len(opaque))  # unreadable ones match nothing
    if tag == "model":
        if len(v) != 2 or type(v[0]) is not str:
            raise _Forged("a model instance of another shape")
        return _ModelRef(v[0], _decode(v[1], site, found, opaque))
    if tag == "tuple":
        return tuple(_decode(i, site, found, opaque) for i in v)
    if tag == "set":
        return {_decode(i, site, found, opaque) for i in v}
    if tag == "fset":
        return frozenset(_decode(i, site, found, opaque) for i in v)
    if tag == "dict":
        if not all(type(p) is list and len(p) == 2 for p in v):
            raise _Forged("a dict that is no list of pairs")
        return {_decode(k, site, found, opaque): _decode(val, site, found, opaque) for k, val in v}
    if tag == "td":
        return datetime.timedelta(*v)
    if type(v) is not str:
        raise _Forged(f"a {tag!r} value that is no text")
    readers = {
        "i": int,
        "f": float,
        "b": lambda t: t.encode("latin-1"),
        "d": decimal.Decimal,
        "dt": datetime.datetime.fromisoformat,
        "date": datetime.date.fromisoformat,
        "time": datetime.time.fromisoformat,
        "u": lambda t: uuid.UUID(hex=t),
    }
    if tag not in readers:
        raise _Forged(f"an unknown tag {tag[:20]!r}")
    return readers[tag](v)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _judge_observation(site: Site, obs: list[Any]) -> str | None:
    """None when the comparison holds on the host, else why not. Raises _Forged."""
    _, left, right, verdict = obs
    sides = []
    opaque: list[str] = []
    try:
        for encoded, holes in zip((left, right), site.sides, strict=True):
            found: list[int] = []
            sides.append(_decode(encoded, site, found, opaque))
            if sorted(found) != sorted(holes):
                raise _Forged("holes where the host put none")
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise _Forged(f"an unreadable value ({type(exc).__name__})") from None
    if site.free:  # a statement's query count with no budget: read, checked for its form, never held against it
        return None
    if opaque and not site.holes:  # no expected value: the process's own comparison stands, as before
        if type(verdict) is bool and verdict != site.negated:
            return None
        return f"line {site.line}: {opaque[0]} values compared {site.op!r}: {verdict}"
    try:
        held = bool(HOST_OPS[site.op](sides[0], sides[1]))
    except Exception as exc:  # noqa: BLE001 - plain values the host built: the comparison failed
        return f"line {site.line}: {_short(sides[0])} {site.op} {_short(sides[1])} raised {type(exc).__name__}"
    if held != site.negated:
        return None
    return f"line {site.line}: assert {'not ' if site.negated else ''}{_short(sides[0])} {site.op} {_short(sides[1])}"


def observing(frames: list[dict[str, Any]]) -> bool:
    """Whether the runner announced observations in its own "started" frame (the first one, before any code under test)."""
    first = next((f for f in frames if f.get("stage") == "started"), None)
    return bool(first and first.get("observing") is True)


def observation_results(frames: list[dict[str, Any]], suite: Suite) -> tuple[dict[str, str], list[str]]:
    """({grading node id: why a comparison of it failed on the host}, tamper problems).

    A must-run comparison of a test that never reported it counts as failed (the test
    cannot have passed without it); an observation for a key the host never made, or in a
    shape the runner never writes, is tampering.
    """
    if not observing(frames):
        return {}, []
    failed: dict[str, str] = {}
    problems: list[str] = []
    seen: set[str] = set()
    for frame in frames:
        obs = frame.get("observed")
        if obs is None:
            continue
        if not (type(obs) is list and len(obs) == 4 and type(obs[0]) is str and obs[0] in suite.sites):
            problems.append("an observation of no comparison the host made (forged by the code under test)")
            continue
        site = suite.sites[obs[0]]
        seen.add(obs[0])
        try:
            why = _judge_observation(site, obs)
        except _Forged as exc:
            problems.append(f"an observation of {site.nodeid} that no runner sends: {exc}")
            continue
        if why is not None:
            failed.setdefault(site.nodeid, why)
    for key, site in suite.sites.items():
        if site.must and key not in seen:
            failed.setdefault(site.nodeid, f"line {site.line}: the comparison was never made")
    return failed, list(dict.fromkeys(problems))


def with_observations(report: dict[str, Any], failed: dict[str, str]) -> dict[str, Any]:
    """The report with every passed test whose comparisons failed on the host marked failed."""
    outcomes = dict(report.get("outcomes") or {})
    failures = dict(report.get("failures") or {})
    for nodeid, outcome in outcomes.items():
        base = nodeid.split("[", 1)[0]
        if outcome == "passed" and base in failed:
            outcomes[nodeid] = "failed"
            failures[nodeid] = f"E   observed on the host: {failed[base]}"
    return {**report, "outcomes": outcomes, "failures": failures}
