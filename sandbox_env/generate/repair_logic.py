"""Repair tasks, the pure part: broken sources, the report, the combination rule, selection, difficulty.

A repair task is an existing task (its spec, its grader, every check, test and row of it)
with a broken deliverable in /workspace: a mutant of the reference that the grader kills
(verify/mutants.py), a `wrong_*` answer kept with the task, a `naive/` deliverable over
the query budget, or two mutants of one reference combined. The model reads a behaviour
report and must make the deliverable right; the grade is the base task's own.

Decisions and threats recorded here (repair.py runs the containers; this module is logic):

- Formatting does not point at the edit: every broken file is `ast.unparse`d (`normalise`),
  which is how the mutation engine writes its mutants, so the unchanged lines of a broken
  file read exactly like the reference rendered the same way. Comments and docstring
  layout go for every line alike. The reference given to graders is untouched.
- Pairs are merged from two single mutants by their token edits against the normalised
  reference (`merge`: an orm cell is often one line); edits that touch the same or adjacent
  tokens are not merged, and the merged source must parse.
- The report is grader evidence only (`orm_report`, `fastapi_report`, `django_report`):
  for orm a sample of differing rows, never as many expected rows as to give the answer
  away (at most half of them, at most two); for fastapi the failing check's requests and
  what the app answered at the first step that differs, every "expected ..." value cut out
  (fastapi checks are hidden); for django the failing visible tests by name with their
  assertion line and only a count of failing hidden tests. Nothing names the mutant, its
  operator, a line number or the fix (`scrub` removes file:line and "line N" text).
- A combination is kept only when it is still broken and neither bug is masked or
  cancelled (`combination_visible`): each single's failures meet the combined failures
  (fastapi, django), or the combined rows differ from each single's rows (orm).
- Selection (`select`): dedup by normalised broken source, at most CAP_PER_REFERENCE
  repairs per reference, singles and pairs alternated, in an order drawn from a hash of
  the names (stable across runs).
- Ids: `<base id>_fix_<12 hex of sha256(base id + normalised broken files)>`: the same broken
  code of the same task gets the same id in every build.
- Split: a repair inherits its base task's split, so no repair of an eval task is in train.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import json
import re
from typing import Any

CAP_PER_REFERENCE = 4
ORM_EXPECTED_SAMPLE = 2  # expected rows a report may show, at most (and at most half of them)

# operator classes: what kind of mistake a mutant makes (the difficulty reads the class)
OPERATOR_CLASS = {
    # a wrong condition or comparison
    "lookup": "condition",
    "compare": "condition",
    "q_and_or": "condition",
    "none_check": "condition",
    "filter_split": "condition",
    "setop": "condition",
    "constraint": "condition",
    "field_option": "condition",
    "meta_constraint": "condition",
    # a wrong value or shape of the answer
    "order": "shape",
    "distinct": "shape",
    "rank": "shape",
    "count_distinct": "shape",
    "coalesce": "shape",
    "slice": "shape",
    "aggregate": "shape",
    "status": "shape",
    "default": "shape",
    "response_model": "shape",
    "exclude": "shape",
    "name": "shape",
    # a missing step: a dependency, a transaction, an exception, a signal, a relation
    "dependency": "omission",
    "atomic": "omission",
    "raise": "omission",
    "signal": "omission",
    "related": "omission",
    # a whole answer written the wrong way, kept with the task
    "wrong": "wrong_answer",
    "naive": "wrong_answer",
}
CLASS_WEIGHT = {"shape": 0, "condition": 1, "omission": 2, "wrong_answer": 2}
EASY_BELOW = 4  # repair score < 4: easy
HARD_FROM = 7  # repair score >= 7: hard


def normalise(source: str) -> str:
    """The source as ast.unparse renders it (the mutation engine's rendering)."""
    return ast.unparse(ast.parse(source))


_TOKEN = re.compile(r"[A-Za-z_0-9.]*\w|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S")


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _edits(ref: str, other: str) -> list[tuple[int, int, str]]:
    """Character spans of `ref` and their replacements in `other`, from a diff of their tokens."""
    rt, ot = _tokens(ref), _tokens(other)
    ops = difflib.SequenceMatcher(None, [t[0] for t in rt], [t[0] for t in ot], autojunk=False).get_opcodes()
    out = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        start = rt[i1][1] if i1 < len(rt) else len(ref)
        end = rt[i2 - 1][2] if i2 > i1 else start
        new = other[ot[j1][1] : ot[j2 - 1][2]] if j2 > j1 else ""
        if i2 == i1 and j2 > j1:  # an insertion: keep the space before the next token
            new += " "
        out.append((start, end, new))
    return out


def sites(reference: str, broken: str) -> int:
    """How many separate places (token hunks) the broken source differs from the reference in."""
    return len(_edits(normalise(reference), normalise(broken)))


def merge(reference: str, a: str, b: str) -> str | None:
    """Both broken sources' edits applied to the reference; None when they touch the same or adjacent tokens."""
    ref = normalise(reference)
    ea, eb = _edits(ref, normalise(a)), _edits(ref, normalise(b))
    if not ea or not eb:
        return None
    for i1, i2, _ in ea:
        for k1, k2, _ in eb:
            if i1 <= k2 + 1 and k1 <= i2 + 1:  # overlapping or touching spans
                return None
    text = ref
    for i1, i2, new in sorted(ea + eb, key=lambda e: e[0], reverse=True):
        text = text[:i1] + new + text[i2:]
    try:
        out = normalise(text)
    except SyntaxError:
        return None
    if out in {ref, normalise(a), normalise(b)} or sites(ref, out) < 2:
        return None
    return out


def repair_id(base_id: str, files: dict[str, str]) -> str:
    blob = json.dumps({"base": base_id, "files": {p: normalise(s) for p, s in sorted(files.items())}}, sort_keys=True)
    return f"{base_id}_fix_{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


# -- the report ---------------------------------------------------------------------------------

_LINE_REF = re.compile(r"(\.py)[:\"', ]+(line )?\d+|\bline \d+\b", re.IGNORECASE)


def scrub(text: str) -> str:
    """Text without line numbers (`app.py:12`, `line 12`), so nothing points at the edited line."""
    return re.sub(r":\s*:\s+", ": ", _LINE_REF.sub(lambda m: m.group(1) or "", text))  # "... host: line 9: x" -> "... host: x"


def _row(values: list[Any]) -> str:
    return "(" + ", ".join(repr(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def orm_report(expected: list[list[Any]], got: list[list[Any]] | dict[str, Any]) -> str:
    """What running the broken cell gave on one copy of the database, against the task's rows there.

    At most ORM_EXPECTED_SAMPLE expected rows, and never more than half of them, are shown.
    """
    if isinstance(got, dict):
        return f"Running the cell fails before it leaves a usable `result`: {scrub(str(got.get('error', got)))[:300]}"
    lines = []
    if len(got) != len(expected):
        lines.append(f"`result` holds {len(got)} row(s); the task's answer on that data has {len(expected)}.")
    else:
        lines.append(f"`result` holds the right number of rows ({len(got)}), but not the right rows.")
    from sandbox_env.families.orm_compare import values_match

    def same(e: list[Any], g: list[Any]) -> bool:
        return len(e) == len(g) and all(values_match(x, y) for x, y in zip(e, g, strict=True))

    differing = [
        i for i in range(max(len(expected), len(got))) if i >= len(expected) or i >= len(got) or not same(expected[i], got[i])
    ]
    budget = min(ORM_EXPECTED_SAMPLE, len(expected) // 2)
    shown = 0
    for i in differing[:2]:
        want = expected[i] if i < len(expected) else None
        have = got[i] if i < len(got) else None
        if want is not None and shown < budget:
            shown += 1
            lines.append(f"  row {i + 1}: expected {_row(want)}, got {_row(have) if have is not None else 'no row'}")
        elif have is not None:
            lines.append(f"  row {i + 1}: got {_row(have)}, which is not the task's row there")
        else:
            lines.append(f"  row {i + 1}: missing (the answer has more rows)")
    if len(differing) > 2:
        lines.append(f"  ... {len(differing)} row positions differ in all.")
    return "\n".join(lines)


_EXPECTED = re.compile(r"expected (?:it to contain )?.*?, got", re.DOTALL)
_MISSING = re.compile(r"missing \(expected .*\)$", re.DOTALL)


def _without_expected(problem: str) -> str:
    text = _EXPECTED.sub("got", problem)
    text = _MISSING.sub("missing", text)
    if "expected" in text:  # a form this does not know: say where, never what
        return text.split(":", 1)[0] + ": not what the specification requires"
    return text


def _request_text(req: dict[str, Any], tokens: list[str]) -> str:
    """Method, path, query, headers and body of a request; a drawn value shows as <value N>."""
    from sandbox_env.families.fastapi_checks import describe_request

    parts = [describe_request(req)]
    headers = [f"{k}: {v}" for k, v in req.get("headers", [])]
    if headers:
        parts.append("headers " + "; ".join(headers))
    for key in ("json", "form", "files", "content"):
        if key in req and req[key] not in (None, "", [], {}):
            body = json.dumps(req[key]) if not isinstance(req[key], str) else req[key]
            parts.append(f"{key} body {body[:300]}")
    text = " with ".join(parts)
    for i, token in enumerate(sorted(tokens, key=len, reverse=True)):
        text = re.sub(rf"(?<![\w.]){re.escape(token)}(?![\w.])", f"<value {i + 1}>", text)
    return text


def fastapi_report(task_checks: list[dict[str, Any]], rows: list[dict[str, Any]], tokens: list[str]) -> str:
    """The failing checks' requests and the first step that differs, with what the app answered there.

    `rows` are the grade's check rows (name, passed, detail); `task_checks` the task's checks in
    the same order. Check names are not shown (they may state the expected behaviour); every
    "expected X" is cut from the details; `tokens` (the task's drawn values) show as <value N>,
    since each test run draws them afresh.
    """
    failing = [(c, r) for c, r in zip(task_checks, rows, strict=False) if not r["passed"]]
    out = [f"{len(failing)} of {len(rows)} behaviour checks fail. For example:"]
    drawn = False
    for check, row in failing[:2]:
        detail = row["detail"]
        step = int(detail.split()[1]) - 1 if detail.startswith("step ") else 0
        problems = detail.partition("): ")[2] if detail.startswith("step ") else detail.partition(": ")[2]
        sent = [_request_text(s["request"], tokens) for s in check["steps"][: step + 1]]
        drawn = drawn or any("<value " in t for t in sent)
        if len(sent) > 1:
            out.append("  requests in order: " + " ; then ".join(sent))
        else:
            out.append(f"  request: {sent[0]}")
        said = "; ".join(_without_expected(p) for p in problems.split("; ") if p)
        out.append(f"  the answer to {'the last request' if len(sent) > 1 else 'it'}: {scrub(said)[:400]}")
    if drawn:
        out.append("(<value N> stands for a value drawn afresh for each test run.)")
    return "\n".join(out)


def django_report(rows: list[dict[str, Any]], visible_prefix: str = "tests/") -> str:
    """Failing visible tests by name with their assertion line; hidden ones only counted."""
    failing = [r for r in rows if not r["passed"]]
    visible = [r for r in failing if r["name"].startswith(visible_prefix)]
    hidden = [r for r in failing if not r["name"].startswith(visible_prefix)]
    out = []
    for r in visible[:3]:
        out.append(f"  {r['name']}: {scrub(r['detail'])[:300]}")
    if len(visible) > 3:
        out.append(f"  ... and {len(visible) - 3} more visible test(s)")
    head = f"{len(visible)} visible acceptance test(s) fail" + (":" if visible else ".")
    tail = f"{len(hidden)} hidden test(s) of the same specification fail too." if hidden else ""
    if not visible:
        head = "The visible acceptance tests pass."
        tail = f"{len(hidden)} hidden test(s) of the same specification fail."
    return "\n".join([head, *out, *([tail] if tail else [])])


# -- combinations, selection, difficulty --------------------------------------------------------


def combination_visible(single_failures: list[set[str]], combined_failures: set[str]) -> bool:
    """Still broken, and every single bug shows among the combined failures (no mask, no cancel)."""
    return bool(combined_failures) and all(f and f & combined_failures for f in single_failures)


def orm_combination_visible(singles: list[dict[str, Any]], combined: dict[str, Any], expected: dict[str, Any]) -> bool:
    """orm, rows per variant: the pair is wrong on every variant, and differs from each single somewhere."""
    if any(_same(combined[v], expected[v]) for v in expected):
        return False
    return all(any(not _same(combined[v], s[v]) for v in expected) for s in singles)


def _same(a: Any, b: Any) -> bool:
    from sandbox_env.families.orm_compare import values_match

    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict)  # both failed to run: not told apart
    return len(a) == len(b) and all(
        len(x) == len(y) and all(values_match(p, q) for p, q in zip(x, y, strict=True)) for x, y in zip(a, b, strict=True)
    )


def rows_pass(expected: list[list[Any]], got: Any) -> bool:
    return not isinstance(got, dict) and _same(expected, got)


def order_key(base_id: str, name: str) -> str:
    return hashlib.sha256(f"{base_id}\0{name}".encode()).hexdigest()


def select(candidates: list[dict[str, Any]], cap: int = CAP_PER_REFERENCE, taken: set[str] | None = None) -> list[dict[str, Any]]:
    """Verified candidates of one reference: dedup by broken source, singles and pairs alternated, at most `cap`."""
    seen = set(taken or ())
    singles = [c for c in candidates if len(c["parts"]) == 1]
    pairs = [c for c in candidates if len(c["parts"]) > 1]
    out: list[dict[str, Any]] = []
    queue = [x for pair in zip(singles, pairs, strict=False) for x in pair]
    queue += singles[len(pairs) :] + pairs[len(singles) :]
    for c in queue:
        key = json.dumps({p: normalise(s) for p, s in sorted(c["files"].items())}, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
        if len(out) >= cap:
            break
    return out


def measures(operators: list[str], n_sites: int, failing: int, total: int, base_difficulty: str) -> dict[str, Any]:
    """Structure of a repair: operator classes, sites, symptom subtlety; its score and base difficulty."""
    classes = sorted({OPERATOR_CLASS.get(op, "shape") for op in operators})
    share = failing / total if total else 1.0
    subtlety = 3 if share <= 0.2 else 2 if share <= 0.5 else 1 if share < 1.0 else 0
    score = (
        2 * (len(operators) - 1)
        + max(0, n_sites - len(operators))
        + max(CLASS_WEIGHT[c] for c in classes)
        + subtlety
        + {"easy": 0, "medium": 1, "hard": 2}[base_difficulty]
    )
    return {
        "operators": sorted(operators),
        "operator_classes": classes,
        "bugs": len(operators),
        "sites": n_sites,
        "failing": failing,
        "observed": total,
        "subtlety": subtlety,
        "score": score,
    }


def difficulty(m: dict[str, Any]) -> str:
    s = m["score"]
    return "easy" if s < EASY_BELOW else "hard" if s >= HARD_FROM else "medium"
