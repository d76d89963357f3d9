"""What a run's transcripts say about the model server, in plain words, for the terminal and the page.

Two findings that a table of rewards hides, each one sentence that `websandbox eval` prints
after its table (both stacks: cli/eval_report.py) and the viewer shows above its own:

- No rollout called a tool. Every task is solved only through `bash` / `execute_code`, so a
  run in which the model replied but never once called a tool scored zeros that measure the
  server, not the model: it dropped the tools from the request (an OpenAI-compatible server
  started without tool-call parsing, a proxy that strips `tools`) or returned the calls as
  text. The sentence says so and points to `websandbox check-server`, which tells which.
  Only rollouts with at least one model reply count: a run whose every rollout errored
  before a reply is the error line's business. The null policy never calls a tool by
  design: a run whose model is named `null` (how `websandbox eval --policy null` names it)
  gets no such sentence.
- Replies cut at the token limit. A reply cut there loses its tool call or its answer, so
  the rollout's zero is the limit's. Runs record it differently: a v1 trace saves each model
  call's `finish_reason` ("length" when cut), so both the rollouts and the replies are
  counted; a classic row saves `is_truncated` for the rollout (a reply that finished on
  "length", or a context past the limit), so rollouts are counted. A run that records
  neither gives no sentence (nothing says it was cut).

- Rollouts played again. verifiers' retry plays a rollout again when an attempt ended on an
  empty reply (or another reply it calls invalid) or a harness fault, and saves only the last
  attempt; a classic row records the earlier attempts' errors (`replayed_after`), and the
  sentence counts them, so a server that sends empty replies shows though every saved row
  looks clean.

Records come from the loaders (record.py: `completion`, `truncated`, `cut_replies`,
`replayed_after`), so both stacks read alike where the run records it.
"""

from __future__ import annotations

from typing import Any

CHECK_SERVER = "websandbox check-server -b BASE_URL -m MODEL"
NULL_POLICY = "null"  # policy/policies.py: answers in prose and never calls a tool


def tool_calls(rollout: dict[str, Any]) -> int:
    """Tool calls the model made in a rollout's transcript."""
    return sum(len(m.get("tool_calls") or []) for m in rollout.get("completion") or [] if m.get("role") == "assistant")


def replied(rollout: dict[str, Any]) -> bool:
    """The model replied at least once (an assistant message in the transcript)."""
    return any(m.get("role") == "assistant" for m in rollout.get("completion") or [])


def no_tool_note(rollouts: list[dict[str, Any]]) -> str | None:
    """The sentence for a run in which no rollout called a tool; None when one did or none got a reply."""
    answered = [r for r in rollouts if replied(r)]
    if not answered or any(tool_calls(r) for r in answered):
        return None
    return (
        f"no rollout called a tool ({len(answered)} of {len(rollouts)} rollouts got a reply, none with a tool call): "
        "the tasks are solved only through the tools, so the model server probably dropped them from the "
        "requests or returned the calls as plain text; check it with `" + CHECK_SERVER + "`"
    )


def cut_note(rollouts: list[dict[str, Any]]) -> str | None:
    """The sentence for replies cut at the token limit, with how many; None when the run records none."""
    cut = [r for r in rollouts if r.get("truncated")]
    if not cut:
        return None
    replies = [r["cut_replies"] for r in cut if isinstance(r.get("cut_replies"), int)]
    counted = f", {sum(replies)} repl{'y' if sum(replies) == 1 else 'ies'} in all" if len(replies) == len(cut) else ""
    how = 'finish_reason "length"' if len(replies) == len(cut) else 'finish_reason "length" or is_truncated'
    return (
        f"{len(cut)} of {len(rollouts)} rollouts had a reply cut at the token limit ({how}{counted}): "
        "a cut reply loses its tool call or its answer; raise the reply limit (max_tokens) "
        "or the server's context length"
    )


def replay_note(rollouts: list[dict[str, Any]]) -> str | None:
    """The sentence for rollouts played again after errored attempts; None when the run records none."""
    replayed = [r for r in rollouts if r.get("replayed_after")]
    if not replayed:
        return None
    errors = [e for r in replayed for e in r["replayed_after"]]
    empty = sum(1 for e in errors if e.startswith("EmptyModelResponseError"))
    said = f", {empty} of them an empty reply" if empty else ""
    return (
        f"{len(replayed)} of {len(rollouts)} rollouts were played again after {len(errors)} errored "
        f"attempt{'' if len(errors) == 1 else 's'}{said}: each row is the last attempt; the earlier errors are "
        "on the rollout (replayed after)"
    )


def run_notes(rollouts: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> list[str]:
    """Every finding that applies, the missing tools first; `meta` is the run's (record.py)."""
    tools_expected = (meta or {}).get("model") != NULL_POLICY
    found = [no_tool_note(rollouts) if tools_expected else None, cut_note(rollouts), replay_note(rollouts)]
    return [note for note in found if note]
