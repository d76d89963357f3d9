"""Difficulty from measured structure: a score from the tree, thresholds written down, a label.

score = 2 * relations traversed (M2M and reverse relations count double: 4)
      + 2 * aggregates + 2 more per conditional aggregate + 1 per distinct count
      + 4 * scalar subqueries + 4 * windows (+1 with a top-k filter)
      + 1 * predicates (comparisons, text, null tests, membership; Q OR/NOT add 1 each)
      + 1 * traps the spec states (bound, case, null, ties, fan-out, same row, vacuous truth)
      + 1 * grouping key, + 1 per computed column (expressions, a Cast among them)
      + 3 * set operations (two filtered querysets combined: a union, intersection or difference)
      + killed mutants // 4 (once verification knows them)

`set_operations` is in a tree's measures only when it has one, so the measures of every tree
stored before compound queries existed stay as they were.

The labels are structural until pass rates of a real policy replace them (README: write
`info["pass_rate"]` back and relabel from it).
"""

from __future__ import annotations

from typing import Any

from sandbox_env.generate import schema
from sandbox_env.generate.tree import (
    Agg,
    And,
    Arith,
    Between,
    Bucket,
    Cast,
    Cmp,
    CoalesceE,
    Concat,
    Every,
    Exists,
    In,
    IsNull,
    Not,
    Or,
    PairFn,
    Part,
    Query,
    SameRow,
    StrFn,
    Sub,
    Text,
    Trunc,
    Win,
    walk,
)  # fmt: skip

EASY_BELOW = 10  # score < 10: easy
HARD_FROM = 18  # score >= 18: hard; in between: medium
MULTI_HOPS = {name for rels in schema.MULTI.values() for name in rels}


def measures(q: Query, traps: list[str], killed: int | None = None) -> dict[str, int]:
    nodes = list(walk(q))
    relations = 0
    for n in nodes:
        if isinstance(n, Exists | Every | SameRow | Sub):
            relations += 2
        elif isinstance(n, Agg):
            relations += 2 * len(n.rel)
    m = {
        "relations": relations,
        "aggregates": sum(isinstance(n, Agg | Sub) for n in nodes),
        "conditional_aggregates": sum(isinstance(n, Agg | Sub) and n.cond is not None for n in nodes),
        "distinct_counts": sum(isinstance(n, Agg) and n.distinct for n in nodes),
        "subqueries": sum(isinstance(n, Sub) for n in nodes),
        "windows": sum(isinstance(n, Win) for n in nodes) + (1 if q.topk else 0),
        "predicates": sum(isinstance(n, Cmp | Between | IsNull | In | Text) for n in nodes)
        + sum(isinstance(n, Or | Not) for n in nodes),
        "boolean_ops": sum(isinstance(n, Or | Not) for n in nodes) + sum(isinstance(n, And) for n in nodes),
        "traps": len(traps),
        "group_keys": len(q.group or ()),
        "expressions": sum(
            isinstance(n, Arith | Part | Trunc | StrFn | Concat | Bucket | CoalesceE | PairFn | Cast) for n in nodes
        ),
        "killed_mutants": killed or 0,
    }
    if q.compound is not None:
        m["set_operations"] = 1
    m["score"] = score(m)
    return m


def score(m: dict[str, int]) -> int:
    return (
        m["relations"]
        + 2 * m["aggregates"]
        + 2 * m["conditional_aggregates"]
        + m["distinct_counts"]
        + 2 * m["subqueries"]  # with the 2 of its relation and the 2 of its aggregate: 6
        + 4 * m["windows"]
        + m["predicates"]
        + m["traps"]
        + m["group_keys"]
        + m["expressions"]
        + m["killed_mutants"] // 4
        + 3 * m.get("set_operations", 0)
    )


def difficulty(m: dict[str, Any]) -> str:
    s = m["score"]
    return "easy" if s < EASY_BELOW else "hard" if s >= HARD_FROM else "medium"


def category(q: Query) -> str:
    """The hand-written tasks' categories, read off the tree."""
    nodes = list(walk(q))
    if any(isinstance(n, Win | Sub) for n in nodes):
        return "advanced"
    if q.group is not None or any(isinstance(n, Agg) for n in nodes):
        return "aggregation"
    if any(isinstance(n, Exists | Every | SameRow) for n in nodes):
        return "relations"
    if any(isinstance(n, Arith | Part | Trunc | StrFn | Concat | Bucket | CoalesceE | PairFn | Cast) for n in nodes):
        return "expressions"
    return "filtering"
