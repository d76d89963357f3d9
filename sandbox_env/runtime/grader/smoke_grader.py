"""Grader of the smoke family: reports the text of one file in /workspace."""

from report_channel import open_channel

channel, request = open_channel()
try:
    with open(f"/workspace/{request['path']}", encoding="utf-8") as fh:
        content = fh.read()
except OSError as exc:
    channel.send({"content": None, "error": str(exc)})
channel.send({"content": content})
