"""Host-wide facts shared by every websandbox process of one user, kept as locked files.

A lock taken with `fcntl.flock` belongs to an open file description, so the kernel
drops it when the process that holds it ends, however it ends (SIGKILL included).
That makes a held lock a liveness fact that needs no cleanup: the container budget
(budget.py) counts held slot files, and a run is live while some process holds its run
file (runs.py).

The files live in a per-user runtime directory: `WEBSANDBOX_RUNTIME_DIR` when set (tests
give each run its own), else `$XDG_RUNTIME_DIR/websandbox`, else `/tmp/websandbox-<uid>`.
The directory is made with mode 0700 and must be owned by the user and not be a
symbolic link, so another user cannot plant or hold its files.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

RUNTIME_DIR_VAR = "WEBSANDBOX_RUNTIME_DIR"


class RuntimeDirError(RuntimeError):
    """The per-user runtime directory cannot be used safely."""


def runtime_dir() -> Path:
    """The per-user directory of lock files (made on first use)."""
    explicit = os.environ.get(RUNTIME_DIR_VAR)
    if explicit:
        path = Path(explicit)
    elif os.environ.get("XDG_RUNTIME_DIR"):
        path = Path(os.environ["XDG_RUNTIME_DIR"]) / "websandbox"
    else:
        path = Path("/tmp") / f"websandbox-{os.getuid()}"
    return private_dir(path)


def private_dir(path: Path) -> Path:
    """`path` as a directory of this user's only: made 0700, refused when owned by another or a link."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise RuntimeDirError(f"cannot make {path}: {exc}; set {RUNTIME_DIR_VAR} to a directory you own") from exc
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise RuntimeDirError(
            f"{path} is not a directory owned by uid {os.getuid()}; remove it or set {RUNTIME_DIR_VAR} to a directory you own"
        )
    return path


def try_lock(path: Path, *, shared: bool = False) -> int | None:
    """A file descriptor holding a lock on `path` (made if missing), or None when it is taken."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def unlock(fd: int) -> None:
    """Drop a lock taken with try_lock (closing the descriptor drops it)."""
    try:
        os.close(fd)
    except OSError:
        pass


def is_held(path: Path) -> bool:
    """Whether some process holds a lock on `path` (a missing file is not held)."""
    if not path.exists():
        return False
    fd = try_lock(path)
    if fd is None:
        return True
    unlock(fd)
    return False
