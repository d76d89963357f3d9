"""The loader of classic runs: what vf-eval 0.3.x saves (`results.jsonl`, `metadata.json`).

One JSON object a line, as verifiers' `state_to_output` writes it: `example_id`,
`prompt` and `completion` (chat messages; a tool call is saved as a JSON *string*
holding {"id", "name", "arguments"}, the arguments again a JSON string), `info` (a dict,
or a JSON string in older runs), `reward`, `error`, `stop_condition`, `metrics` and the
same metrics flattened to the top level, and every `-C` state column (`grade` when
`websandbox eval` or `-C grade` made the run).

Tolerance, because runs outlive the code that wrote them: blank, malformed and
non-object lines are skipped and counted in `problems`; a row without `grade` still
shows its transcript, reward and the `scoring_error`/`tampered` metrics; tool calls in
the OpenAI shape ({"function": {"name", "arguments"}}) read the same as the flat one;
content given as a list of parts is joined; a missing or unreadable metadata.json is a
problem, not a failure.

Truncation: 0.3.x saves `is_truncated` per rollout (a reply that finished on "length", or a
context past the limit), not per model call: `truncated` is that flag, `cut_replies` None.

Tokens and time: 0.3.x saves a rollout's `token_usage` (`input_tokens`, `output_tokens`,
summed over its model calls) and `timing` (`setup`, `generation`, `scoring`, and the model's
and the environment's `spans`, one a call), but no tokens per call: each assistant turn
gets the time of its model span (the n-th span is the n-th assistant message) and no
token count.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from sandbox_env.viewer.record import Run

RESULTS = "results.jsonl"
METADATA = "metadata.json"
META_KEYS = (
    "env_id",
    "env_args",
    "model",
    "num_examples",
    "rollouts_per_example",
    "time",
    "avg_reward",
    "date",
    "version_info",
    "sampling_args",
)


def _maybe_json(value: Any) -> Any:
    """A JSON string decoded; anything else (or a string that is not JSON) as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def content_text(content: Any) -> str:
    """A message's content as text: parts joined, images named, None empty."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict) and part.get("type") in (None, "text"):
                out.append(str(part.get("text", "")))
            elif isinstance(part, dict):
                out.append(f"[{part.get('type')}]")
            else:
                out.append(str(part))
        return "".join(out)
    return json.dumps(content, ensure_ascii=False)


def tool_call(raw: Any) -> dict[str, Any]:
    """{"id", "name", "arguments"} from a saved tool call (a JSON string or a dict, flat or OpenAI-shaped)."""
    call = _maybe_json(raw)
    if not isinstance(call, dict):
        return {"id": "", "name": "?", "arguments": call}
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    return {"id": str(call.get("id") or ""), "name": str(fn.get("name") or "?"), "arguments": _maybe_json(fn.get("arguments"))}


def message(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        return {"role": "?", "content": content_text(raw)}
    out: dict[str, Any] = {"role": str(raw.get("role") or "?"), "content": content_text(raw.get("content"))}
    calls = raw.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [tool_call(c) for c in calls]
    if raw.get("tool_call_id"):
        out["tool_call_id"] = str(raw["tool_call_id"])
    reasoning = raw.get("reasoning_content") or raw.get("reasoning")
    if reasoning:
        out["reasoning"] = content_text(reasoning)
    return out


def messages(raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if isinstance(raw, str):  # a completion-only environment saves text
        return [{"role": "assistant", "content": raw}]
    return [message(m) for m in raw] if isinstance(raw, list) else [message(raw)]


def _error_text(error: Any) -> str | None:
    """The saved error with its messages: verifiers' `error_chain_repr`
    (`ModelError() -> InternalServerError('Error code: 500 - ...')`), else what the row has."""
    if not error:
        return None
    if isinstance(error, dict):
        return str(
            error.get("error_chain_repr")
            or error.get("error_chain_str")
            or error.get("message")
            or json.dumps(error, ensure_ascii=False)
        )
    return str(error)


def _error_kind(error: Any) -> str | None:
    """What kind of error ended the rollout: the chain's class names (`ModelError -> InternalServerError`),
    as verifiers saves them in `error_chain_str`; for an error saved as text, its leading class name."""
    if not error:
        return None
    if isinstance(error, dict):
        kind = error.get("error_chain_str") or error.get("error")
        return str(kind) if kind else "error"
    head = re.match(r"\s*([A-Za-z_][\w.]*)(?=[:(]|\s*->|\s*$)", str(error))
    return head.group(1) if head else "error"


def _flag(row: dict[str, Any], metrics: dict[str, Any], name: str) -> bool:
    value = metrics.get(name, row.get(name))
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0 or value is True


def rollout(row: dict[str, Any], n: int, prompt_key: str) -> dict[str, Any]:
    """One saved row as a viewer record (record.py lists the keys)."""
    info = _maybe_json(row.get("info"))
    info = info if isinstance(info, dict) else {}
    grade = _maybe_json(row.get("grade"))
    grade = grade if isinstance(grade, dict) else None
    metrics = row.get("metrics") if isinstance(row.get("metrics"), dict) else {}
    metrics = {k: v for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    scoring_error = grade.get("scoring_error") if grade else None
    if not scoring_error and _flag(row, metrics, "scoring_error"):
        scoring_error = "the scoring_error metric is set (the run saved no grade that says why)"
    reward = row.get("reward")
    seconds, phases, turns = timing_of(row)
    completion = _with_turn_times(messages(row.get("completion")), turns)
    return {
        "n": n,
        "example_id": row.get("example_id"),
        "family": str(info.get("family") or row.get("task") or "?"),
        "task_id": str(info.get("task_id") or f"example {row.get('example_id', n)}"),
        "difficulty": info.get("difficulty"),
        "category": info.get("category"),
        "reward": float(reward) if isinstance(reward, int | float) and not isinstance(reward, bool) else None,
        "scoring_error": str(scoring_error) if scoring_error else None,
        "tampered": bool(grade and grade.get("tampered")) or _flag(row, metrics, "tampered"),
        "error": _error_text(row.get("error")),
        "error_kind": _error_kind(row.get("error")),
        "traceback": None,
        "grade": grade,
        "prompt": prompt_key,
        "completion": completion,
        "stop": row.get("stop_condition"),
        "metrics": metrics,
        "turns": sum(1 for m in completion if m["role"] == "assistant"),
        "tokens": tokens_of(row),
        "seconds": seconds,
        "timing": phases,
        "truncated": row["is_truncated"] if isinstance(row.get("is_truncated"), bool) else None,
        "cut_replies": None,  # 0.3.x saves no finish_reason per model call
        "replayed_after": _replayed_after(info),
    }


def _replayed_after(info: dict[str, Any]) -> list[str]:
    """The errors of the attempts this row's rollout replayed (doors/replayed_attempts.py), oldest first."""
    earlier = info.get("replayed_after")
    return [str(e) for e in earlier] if isinstance(earlier, list) else []


def _seconds(value: Any) -> float | None:
    if isinstance(value, dict):
        value = value.get("duration")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def tokens_of(row: dict[str, Any]) -> dict[str, int] | None:
    usage = row.get("token_usage") if isinstance(row.get("token_usage"), dict) else {}
    counts = {k: usage.get(f"{k}_tokens") for k in ("input", "output")}
    counts = {k: int(v) for k, v in counts.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return counts or None


def timing_of(row: dict[str, Any]) -> tuple[float | None, dict[str, float] | None, list[float]]:
    """(the rollout's total seconds, seconds by phase, seconds of each model call in order)."""
    timing = row.get("timing") if isinstance(row.get("timing"), dict) else {}
    phases = {name: s for name in ("setup", "generation", "scoring") if (s := _seconds(timing.get(name))) is not None}
    for part in ("model", "env"):
        if (s := _seconds(timing.get(part))) is not None:
            phases[f"{part} calls"] = s
    spans = timing.get("model", {}).get("spans") if isinstance(timing.get("model"), dict) else None
    turns = [s for span in spans if (s := _seconds(span)) is not None] if isinstance(spans, list) else []
    return _seconds(timing.get("total")), phases or None, turns


def _with_turn_times(completion: list[dict[str, Any]], turns: list[float]) -> list[dict[str, Any]]:
    """Each assistant message's model time, when the run saved one span per assistant message."""
    said = [m for m in completion if m["role"] == "assistant"]
    if turns and len(turns) == len(said):
        for m, seconds in zip(said, turns, strict=True):
            m["usage"] = {"seconds": seconds}
    return completion


def read_jsonl(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    """Objects from a JSONL file; lines that are blank, not JSON or not objects are skipped and reported."""
    rows = []
    with path.open("rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (UnicodeDecodeError, ValueError) as exc:
                # a last line without its newline is one a run in progress is still writing
                still = "" if line.endswith(b"\n") else ": the run may still be writing it"
                problems.append(f"{path.name} line {number} skipped: not JSON ({exc}){still}")
                continue
            if not isinstance(row, dict):
                problems.append(f"{path.name} line {number} skipped: a {type(row).__name__}, not an object")
                continue
            rows.append(row)
    return rows


def read_metadata(path: Path, problems: list[str]) -> dict[str, Any]:
    if not path.is_file():
        problems.append(f"no {path.name} beside {RESULTS}: the run's model and arguments are unknown")
        return {}
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        problems.append(f"{path.name} is unreadable: {exc}")
        return {}
    return {k: meta[k] for k in META_KEYS if k in meta} if isinstance(meta, dict) else {}


class ClassicLoader:
    name = "classic (vf-eval 0.3.x results.jsonl)"

    def detect(self, path: Path) -> bool:
        return (path / RESULTS).is_file()

    def read(self, path: Path) -> Run:
        problems: list[str] = []
        meta = read_metadata(path / METADATA, problems)
        run = Run(format="classic", source=str(path), meta=meta, problems=problems)
        for n, row in enumerate(read_jsonl(path / RESULTS, problems)):
            prompt = messages(row.get("prompt"))
            key = hashlib.sha1(json.dumps(prompt, sort_keys=True).encode()).hexdigest()[:16]
            run.prompts.setdefault(key, prompt)
            run.rollouts.append(rollout(row, n, key))
        return run
