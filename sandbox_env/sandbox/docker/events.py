"""The engine's record of how each container of one backend ended, kept from its event stream.

Containers are made with `auto_remove`, so an exited container is gone before anyone can
inspect it: its exit code and its `OOMKilled` flag go with it. The engine's event stream
keeps them: `oom` when the kernel killed a process for memory, `kill` when someone asked
the engine to signal the container (`docker kill`, `docker rm -f`, this backend's own
removal), `die` with the exit code, `destroy` once it is removed. One thread per backend
follows the stream of the containers that carry the backend's client label.

How a container ended tells who ended it (blame rule 3, docs/architecture.md): a `die` with no `kill` before
it and no removal asked by this backend means that the container's own processes ended
(every process killed from inside, or its agent killed by the OOM killer).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import docker

logger = logging.getLogger("websandbox.sandbox")


@dataclass
class Ending:
    """What the engine said about one container so far."""

    oom: bool = False
    killed: str | None = None  # the signal an outside `kill` asked for
    exit_code: int | None = None
    died: bool = False
    destroyed: bool = False
    seen: list[str] = field(default_factory=list)


class ContainerEvents:
    """Follows `die`, `oom`, `kill` and `destroy` events of containers labelled `label`."""

    def __init__(self, api: docker.APIClient, label: str) -> None:
        self._api = api
        self._label = label
        self._endings: dict[str, Ending] = {}
        self._cond = threading.Condition()
        self._stream = None
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._since = int(time.time()) - 1

    def start(self) -> None:
        with self._cond:
            if self._thread is not None or self._stopped:
                return
            self._thread = threading.Thread(target=self._run, name="websandbox-events", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - closing a stream whose socket is gone
                pass

    def _run(self) -> None:
        filters = {"label": self._label, "type": "container", "event": ["oom", "kill", "die", "destroy"]}
        while not self._stopped:
            try:
                stream = self._api.events(decode=True, filters=filters, since=self._since)
                with self._cond:
                    if self._stopped:
                        stream.close()
                        return
                    self._stream = stream
                for event in stream:
                    self._since = int(event.get("time") or self._since)
                    self._record(event)
            except Exception as exc:  # noqa: BLE001 - the engine dropped the stream: follow it again
                if self._stopped:
                    return
                logger.debug("container event stream broke: %s", exc)
                time.sleep(1.0)

    def _record(self, event: dict) -> None:
        cid = (event.get("Actor") or {}).get("ID") or event.get("id")
        if not cid:
            return
        attrs = (event.get("Actor") or {}).get("Attributes") or {}
        action = event.get("Action") or event.get("status") or ""
        with self._cond:
            ending = self._endings.setdefault(cid, Ending())
            ending.seen.append(action)
            if action == "oom":
                ending.oom = True
            elif action == "kill" and not ending.died:
                ending.killed = attrs.get("signal") or "?"
            elif action == "die":
                ending.died = True
                code = attrs.get("exitCode")
                ending.exit_code = int(code) if code is not None and str(code).lstrip("-").isdigit() else None
            elif action == "destroy":
                ending.destroyed = True
            self._cond.notify_all()

    def wait_for_death(self, cid: str, timeout: float) -> Ending | None:
        """How container `cid` ended, waiting up to `timeout` for its `die` event; None if it has not died."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                ending = self._endings.get(cid)
                if ending is not None and ending.died:
                    return ending
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._thread is None:
                    return None
                self._cond.wait(remaining)

    def forget(self, cid: str) -> None:
        with self._cond:
            self._endings.pop(cid, None)
