"""The persistent Python session behind execute_code.

Protocol: JSON lines on the pipes the agent gave as stdin/stdout, which are moved to
private descriptors at start; fd 0 becomes /dev/null and fd 1/2 a capture file, so
output of subprocesses and C code is collected with the cell's prints. Every request
carries an id that the reply repeats (the agent drops any other line), and a reply is
kept under MAX_REPLY: a larger one is replaced by a reply that says so.

The model's code runs in this process and can rewrite all of it: nothing here is
trusted by the agent or the host beyond "what the model's session says", which is
the model's answer anyway. What it cannot do is slow the session's (re)start: the
working directory goes on sys.path only after the preamble ran, and the agent starts
the session without the user site directory (-s), so a module the model planted in
/workspace (a `django` package that sleeps) or a usercustomize.py under its home cannot
hold up a restart past the host's deadline, which the host would have to take for a
harness fault.
"""

from __future__ import annotations

import ast
import io
import json
import linecache
import math
import os
import signal
import sys
import tempfile
import traceback

MAX_CELL_OUTPUT = 1 << 20
MAX_PROBE_ITEMS = 100_000
MAX_REPLY = 4 << 20
WORKSPACE = os.getcwd()


class _Capture(io.TextIOBase):
    """A text stream with a size cap, so a runaway print cannot exhaust memory."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        room = MAX_CELL_OUTPUT - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(len(s), room)
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self) -> str:
        return "".join(self.parts)


class Session:
    def __init__(self, proto_in: io.BufferedReader, proto_out: io.BufferedWriter, raw_out) -> None:
        self.proto_in = proto_in
        self.proto_out = proto_out
        self.raw_out = raw_out
        self.ns: dict = {"__name__": "__main__", "__builtins__": __builtins__}
        self.cell = 0

    def _raw_tail(self, start: int) -> str:
        self.raw_out.flush()
        end = os.lseek(1, 0, os.SEEK_END)
        if end <= start:
            return ""
        with open(self.raw_out.name, "rb") as fh:
            fh.seek(start)
            return fh.read(min(end - start, MAX_CELL_OUTPUT)).decode("utf-8", "replace")

    def run_cell(self, code: str) -> dict:
        self.cell += 1
        filename = f"<cell {self.cell}>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        capture = _Capture()
        raw_start = os.lseek(1, 0, os.SEEK_END)
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        try:
            tree = ast.parse(code, filename=filename, mode="exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, filename, "exec"), self.ns)
            if last is not None:
                value = eval(compile(last, filename, "eval"), self.ns)
                if value is not None:
                    self.ns["_"] = value
                    print(repr(value))
        except BaseException as exc:  # noqa: BLE001 - the model's code may raise anything
            if isinstance(exc, SystemExit):
                capture.write(f"SystemExit({exc.code!r}) was raised; the session keeps running\n")
            else:
                tb = traceback.TracebackException.from_exception(exc)
                frames = [f for f in tb.stack if f.filename != __file__]
                tb.stack = traceback.StackSummary.from_list(frames)
                capture.write("".join(tb.format()))
        finally:
            sys.stdout, sys.stderr = old_out, old_err
        output = self._raw_tail(raw_start) + capture.text()
        if capture.dropped:
            output += f"\n[{capture.dropped} characters of output were dropped]"
        return {"output": output}

    def probe(self, name: str) -> dict:
        if name not in self.ns:
            return {"value": {"missing": True}}
        budget = [MAX_PROBE_ITEMS]
        try:
            return {"value": encode(self.ns[name], budget)}
        except (ValueError, RecursionError) as exc:
            return {"value": {"other": "too large", "repr": str(exc)[:200]}}

    def handle(self, req: dict) -> dict:
        op = req.get("op")
        try:
            if op == "init":
                reply = self.run_cell(req["preamble"]) if req.get("preamble") else {"output": ""}
                reply["ready"] = True
                if WORKSPACE not in sys.path:  # only now: the preamble imports from the image alone
                    sys.path.insert(0, WORKSPACE)
            elif op == "exec":
                reply = self.run_cell(req["code"])
            elif op == "probe":
                reply = self.probe(req["name"])
            else:
                reply = {"error": f"unknown session op {op!r}"}
        except KeyboardInterrupt:
            reply = {"output": "KeyboardInterrupt"}
        return reply

    def _encode(self, reply: dict, rid) -> bytes:
        reply["id"] = rid
        try:
            data = json.dumps(reply).encode()
        except (ValueError, TypeError) as exc:  # e.g. an int too long to print
            data = json.dumps({"id": rid, "output": f"[the reply could not be encoded: {exc}]"[:2000]}).encode()
        if len(data) <= MAX_REPLY:
            return data
        if "value" in reply:
            small = {
                "value": {
                    "other": "too large",
                    "repr": f"the encoded value is {len(data)} bytes, over the session's limit of {MAX_REPLY}",
                }
            }
        else:
            text = reply.get("output") or ""
            small = {"output": text[: MAX_REPLY // 8] + f"\n[the output was cut: its encoding is {len(data)} bytes]"}
        small["id"] = rid
        return json.dumps(small).encode()

    def serve(self) -> None:
        while True:
            try:
                line = self.proto_in.readline()
            except KeyboardInterrupt:  # an interrupt that came after the cell had finished
                continue
            if not line:
                return
            try:
                req = json.loads(line)
            except ValueError:
                req = None
            if not isinstance(req, dict):
                reply, rid = {"error": "the session received a line that is not a request"}, None
            else:
                reply, rid = self.handle(req), req.get("id")
            self.proto_out.write(self._encode(reply, rid) + b"\n")
            self.proto_out.flush()


def encode(value, budget: list[int]):
    """Tagged JSON for a value, judged by exact type so no subclass can pose as a plain value."""
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError("value too large to probe")
    t = type(value)
    if value is None or t in (bool, int, str):
        return value
    if t is float:
        if math.isfinite(value):
            return value
        return {"other": "float", "repr": repr(value)}
    if t is list:
        return {"list": [encode(v, budget) for v in value]}
    if t is tuple:
        return {"tuple": [encode(v, budget) for v in value]}
    try:
        text = repr(value)[:200]
    except Exception:  # noqa: BLE001 - a hostile __repr__
        text = "<unrepresentable>"
    return {"other": f"{t.__module__}.{t.__qualname__}", "repr": text}


def main() -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    raw = tempfile.NamedTemporaryFile(prefix="session-output-", dir="/tmp", delete=True)
    os.dup2(raw.fileno(), 1)
    os.dup2(raw.fileno(), 2)
    sys.stdin = open(os.devnull)
    del sys.path[0]  # this program's folder; the working directory comes after the preamble (handle)
    Session(proto_in, proto_out, raw).serve()


if __name__ == "__main__":
    main()
