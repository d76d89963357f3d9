"""The loader of v1 runs: what verifiers 0.4.x `vf-eval` saves (`traces.jsonl`, `configs/`, `logs/`).

`traces.jsonl` holds one *episode* a line (verifiers.v1.utils.trace_store.write_episode:
`id`, `env`, `task`, `run`, `ok`, `errors`, `traces`), and each episode one trace a
rollout agent (websandbox has one). A trace, as pydantic dumps `verifiers.v1.trace.Trace`
with `exclude_none`: `task.data` (the row: `idx`, `task_id`, `family`, `difficulty`,
`category`...), `nodes` (the message graph: `message`, `parent`, `sampled`, `timestamp`),
`calls` (one a model call: `node` it committed, `usage` {`prompt_tokens`,
`completion_tokens`, `cached_input_tokens`}, `time` {`start`, `end`}, `finish_reason`,
`error`), `rewards` ({name: {`score`, `weight`} or null}), `metrics`, `info` (websandbox
puts its grade in `info["grade"]`), `ok`, `errors` ([{`type`, `message`, `traceback`}],
oldest first), `stop_condition`, `timing` (`start`; `boot`, `setup`, `agent`, `finalize`,
`scoring` spans; the agent's `model` and `harness` durations), `verifiers.version`.

Decisions:
- verifiers is not imported (see the package docstring): the JSON is read as data, with
  the classic reader's JSONL rules, and every key may be missing (runs outlive the code).
- The transcript is the final branch, as `Trace.messages` has it: the path from the last
  leaf of the graph (a node no other node names as parent) back to its root. The nodes
  before the first sampled one are the prompt (shared between rollouts of a task, as in
  classic runs), the rest the completion.
- Reward is `Trace.reward` (the sum of score x weight) when scoring ran, and None when
  every reward is null or none was saved ("scoring didn't run"), where v1 would say 0.0:
  an unscored rollout is then left out of the means instead of counting as a zero.
- A rollout errored when its trace is not `ok`: its error is every saved error as
  `Type: message` (oldest first), its kind the last one's type; the last traceback is kept.
  A trace that is not ok and saved no error of its own takes its episode's errors.
- A reply was cut at the token limit when its call's `finish_reason` is "length" (what
  `Trace.is_truncated` reads for the last call; its stop conditions for the agent's own
  budgets are the `stop` column): `truncated` and `cut_replies` count every call.
- Tokens and time per turn come from `calls`, matched to the assistant node they committed;
  input tokens are the whole context the call sent (cache reads included).
- What the run was made with comes from `configs/resolved/eval.json` (every setting) and
  `configs/eval.toml` (what the user gave): model, taskset arguments, sampling, agent
  limits; the verifiers version from the traces.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

from sandbox_env.viewer.classic import _flag, messages, read_jsonl
from sandbox_env.viewer.record import Run

TRACES = "traces.jsonl"
RESOLVED = Path("configs") / "resolved" / "eval.json"
GIVEN = Path("configs") / "eval.toml"
PHASES = ("boot", "setup", "agent", "finalize", "scoring")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _span(value: Any) -> float | None:
    span = _dict(value)
    start, end = _number(span.get("start")), _number(span.get("end"))
    return max(0.0, end - start) if start is not None and end else None


def reward_of(trace: dict[str, Any]) -> float | None:
    """`Trace.reward` when scoring ran; None when no reward was saved or every one is null."""
    scored = [r for r in _dict(trace.get("rewards")).values() if isinstance(r, dict) and _number(r.get("score")) is not None]
    if not scored:
        return None
    return sum(float(r["score"]) * (_number(r.get("weight")) if _number(r.get("weight")) is not None else 1.0) for r in scored)


def final_branch(nodes: list[dict[str, Any]]) -> list[int]:
    """The indices of the last root-to-leaf path's nodes, root first (`Trace.messages`)."""
    has_child = {n.get("parent") for n in nodes if isinstance(n.get("parent"), int)}
    leaves = [i for i in range(len(nodes)) if i not in has_child]
    if not leaves:  # a cycle: no leaf to start from
        return list(range(len(nodes)))
    path, seen, at = [], set(), leaves[-1]
    while isinstance(at, int) and 0 <= at < len(nodes) and at not in seen:
        seen.add(at)
        path.append(at)
        at = nodes[at].get("parent")
    return path[::-1]


def turn_usage(call: dict[str, Any]) -> dict[str, Any]:
    """One model call's tokens and time: {input_tokens, output_tokens, seconds, finish_reason}."""
    usage = _dict(call.get("usage"))
    prompt = _number(usage.get("prompt_tokens"))
    if prompt is None:
        prompt = _number(usage.get("input_tokens"))
    elif _number(usage.get("cached_input_tokens")):
        prompt += usage["cached_input_tokens"]
    out = {
        "input_tokens": int(prompt) if prompt is not None else None,
        "output_tokens": int(usage["completion_tokens"]) if _number(usage.get("completion_tokens")) is not None else None,
        "seconds": _span(call.get("time")),
        "finish_reason": call.get("finish_reason") if isinstance(call.get("finish_reason"), str) else None,
    }
    return {k: v for k, v in out.items() if v is not None}


def transcript(trace: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(prompt, completion) as viewer messages; assistant turns carry their `usage` where the trace has it."""
    by_node = {c.get("node"): c for c in _list(trace.get("calls")) if isinstance(c, dict) and isinstance(c.get("node"), int)}
    nodes = [n if isinstance(n, dict) else {} for n in _list(trace.get("nodes"))]
    branch = final_branch(nodes)
    first = next((k for k, i in enumerate(branch) if nodes[i].get("sampled")), len(branch))
    prompt = messages([nodes[i].get("message") for i in branch[:first]])
    completion = messages([nodes[i].get("message") for i in branch[first:]])
    for i, msg in zip(branch[first:], completion, strict=True):
        call = by_node.get(i)
        if call is not None and (usage := turn_usage(call)):
            msg["usage"] = usage
    return prompt, completion


def _error_line(error: Any) -> str:
    e = _dict(error)
    kind, text = str(e.get("type") or "error"), str(e.get("message") or "")
    return f"{kind}: {text}" if text else kind


def errors_of(trace: dict[str, Any], episode: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(error, error_kind, traceback) of a trace that is not ok; three Nones for one that is."""
    if trace.get("ok") is not False and trace.get("ok") is not None:
        return None, None, None
    errors = [e for e in _list(trace.get("errors")) if isinstance(e, dict)]
    errors = errors or [e for e in _list(episode.get("errors")) if isinstance(e, dict)]
    errors = errors or [c["error"] for c in _list(trace.get("calls")) if isinstance(c, dict) and isinstance(c.get("error"), dict)]
    if not errors:
        if trace.get("ok") is None:
            return None, None, None  # a trace saved without the field: nothing says it failed
        stop = trace.get("stop_condition")
        return f"the trace is not ok and saved no error (stopped: {stop or 'unknown'})", "error", None
    last = errors[-1]
    text = "; ".join(_error_line(e) for e in errors)
    trace_back = last.get("traceback") if isinstance(last.get("traceback"), str) else None
    return text, str(last.get("type") or "error"), trace_back


def tokens_of(trace: dict[str, Any]) -> dict[str, int] | None:
    """The rollout's tokens: the trace's own counts, else the sum over its calls."""
    counts = {"input": _number(trace.get("num_input_tokens")), "output": _number(trace.get("num_output_tokens"))}
    if counts["input"] is None and counts["output"] is None:
        turns = [turn_usage(c) for c in _list(trace.get("calls")) if isinstance(c, dict)]
        ins = [t["input_tokens"] for t in turns if "input_tokens" in t]
        outs = [t["output_tokens"] for t in turns if "output_tokens" in t]
        counts = {"input": sum(ins) if ins else None, "output": sum(outs) if outs else None}
    if counts["input"] is None and counts["output"] is None:
        return None
    return {k: int(v) for k, v in counts.items() if v is not None}


def cut_of(trace: dict[str, Any]) -> dict[str, Any]:
    """{truncated, cut_replies}: the model calls that finished on "length" (a reply cut at the token
    limit), counted over every call of the trace; both None when no call saved a finish_reason."""
    reasons = [c.get("finish_reason") for c in _list(trace.get("calls")) if isinstance(c, dict)]
    reasons = [r for r in reasons if isinstance(r, str)]
    if not reasons:
        return {"truncated": None, "cut_replies": None}
    cut = sum(1 for r in reasons if r == "length")
    return {"truncated": cut > 0, "cut_replies": cut}


def timing_of(trace: dict[str, Any]) -> tuple[float | None, dict[str, float] | None]:
    """(seconds from the trace's start to its last phase's end, seconds by phase)."""
    timing = _dict(trace.get("timing"))
    phases = {name: s for name in PHASES if (s := _span(timing.get(name))) is not None}
    agent = _dict(timing.get("agent"))
    for part in ("model", "harness"):
        if (d := _number(_dict(agent.get(part)).get("duration"))) is not None:
            phases[f"agent: {part}"] = d
    ends = [_number(_dict(timing.get(name)).get("end")) for name in PHASES]
    ends = [e for e in ends if e]
    start = _number(timing.get("start"))
    total = max(ends) - start if ends and start is not None else None
    return total, phases or None


def rollout(
    trace: dict[str, Any], episode: dict[str, Any], n: int, prompt_key: str, completion: list[dict[str, Any]]
) -> dict[str, Any]:
    """One trace as a viewer record (record.py lists the keys)."""
    task = _dict(trace.get("task")) or _dict(episode.get("task"))
    data = _dict(task.get("data"))
    info = _dict(trace.get("info"))
    grade = info.get("grade") if isinstance(info.get("grade"), dict) else None
    metrics = {k: v for k, v in _dict(trace.get("metrics")).items() if _number(v) is not None}
    scoring_error = grade.get("scoring_error") if grade else None
    if not scoring_error and _flag(trace, metrics, "scoring_error"):
        scoring_error = "the scoring_error metric is set (the run saved no grade that says why)"
    error, kind, trace_back = errors_of(trace, episode)
    seconds, phases = timing_of(trace)
    return {
        "n": n,
        "example_id": data.get("idx"),
        "family": str(data.get("family") or "?"),
        "task_id": str(data.get("task_id") or data.get("id") or task.get("key") or f"example {n}"),
        "difficulty": data.get("difficulty"),
        "category": data.get("category"),
        "reward": reward_of(trace),
        "scoring_error": str(scoring_error) if scoring_error else None,
        "tampered": bool(grade and grade.get("tampered")) or _flag(trace, metrics, "tampered"),
        "replayed_after": None,  # v1 keeps no record of attempts its retry replaced in the trace
        "error": error,
        "error_kind": kind,
        "traceback": trace_back,
        "grade": grade,
        "prompt": prompt_key,
        "completion": completion,
        "stop": trace.get("stop_condition"),
        "metrics": metrics,
        "turns": sum(1 for m in completion if m["role"] == "assistant"),
        "tokens": tokens_of(trace),
        "seconds": seconds,
        "timing": phases,
        **cut_of(trace),
    }


def read_configs(path: Path, problems: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(resolved config, the config as given); {} for a file that is missing or unreadable."""
    resolved: dict[str, Any] = {}
    given: dict[str, Any] = {}
    if (path / RESOLVED).is_file():
        try:
            resolved = _dict(json.loads((path / RESOLVED).read_text()))
        except (OSError, ValueError) as exc:
            problems.append(f"{RESOLVED} is unreadable: {exc}")
    if (path / GIVEN).is_file():
        try:
            given = _dict(tomllib.loads((path / GIVEN).read_text()))
        except (OSError, ValueError) as exc:
            problems.append(f"{GIVEN} is unreadable: {exc}")
    if not resolved and not given:
        problems.append(f"no {RESOLVED} or {GIVEN} beside {TRACES}: the run's model and arguments are unknown")
    return resolved, given


def _set(values: dict[str, Any]) -> dict[str, Any]:
    """Settings that were given a value (None means the provider's default)."""
    return {k: v for k, v in values.items() if v is not None and v != {} and v != []}


def run_meta(
    resolved: dict[str, Any], given: dict[str, Any], traces: list[dict[str, Any]], rewards: list[float]
) -> dict[str, Any]:
    """What the run says about itself, under the classic metadata's names where one fits."""
    config = resolved or given
    taskset = _dict(_dict(given.get("env")).get("taskset")) or _dict(_dict(config.get("env")).get("taskset"))
    agent = _dict(_dict(given.get("env")).get("agent"))
    meta: dict[str, Any] = {}
    if config.get("model"):
        meta["model"] = config["model"]
    if taskset.get("id"):
        meta["env_id"] = taskset["id"]
    env_args = _set({k: v for k, v in taskset.items() if k != "id"})
    if env_args:
        meta["env_args"] = env_args
    meta["sampling_args"] = _set(_dict(config.get("sampling")))
    if agent:
        meta["agent_args"] = agent
    if config.get("num_rollouts") is not None:
        meta["rollouts_per_example"] = config["num_rollouts"]
    if _dict(config.get("run")).get("name"):
        meta["run_name"] = config["run"]["name"]
    versions = sorted({str(_dict(t.get("verifiers")).get("version")) for t in traces if _dict(t.get("verifiers")).get("version")})
    if versions:
        meta["version_info"] = {"vf_version": ", ".join(versions)}
    starts = [s for t in traces if (s := _number(_dict(t.get("timing")).get("start")))]
    if starts:
        meta["date"] = dt.datetime.fromtimestamp(min(starts), dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if rewards:
        meta["avg_reward"] = sum(rewards) / len(rewards)
    return meta


class V1Loader:
    name = "v1 (verifiers 0.4.x traces.jsonl)"

    def detect(self, path: Path) -> bool:
        return (path / TRACES).is_file()

    def read(self, path: Path) -> Run:
        problems: list[str] = []
        resolved, given = read_configs(path, problems)
        run = Run(format="v1", source=str(path), problems=problems)
        traces: list[dict[str, Any]] = []
        for number, episode in enumerate(read_jsonl(path / TRACES, problems), start=1):
            episode_traces = [t for t in _list(episode.get("traces")) if isinstance(t, dict)]
            if not episode_traces:
                problems.append(f"{TRACES} episode {number} skipped: it holds no trace")
                continue
            for trace in episode_traces:
                prompt, completion = transcript(trace)
                key = hashlib.sha1(json.dumps(prompt, sort_keys=True).encode()).hexdigest()[:16]
                run.prompts.setdefault(key, prompt)
                run.rollouts.append(rollout(trace, episode, len(run.rollouts), key, completion))
                traces.append(trace)
        rewards = [r["reward"] for r in run.rollouts if r["reward"] is not None]
        run.meta = run_meta(resolved, given, traces, rewards)
        return run
