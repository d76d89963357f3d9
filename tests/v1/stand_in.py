"""A stand-in for the verifiers build prime-rl pins: this venv's verifiers (the v1 API), repacked as `0.3.1.dev62`.

prime-rl installs verifiers from a git commit that builds as `0.3.1.dev62` and carries
`verifiers.v1`, and names its v1 eval script `eval` (its `vf-eval` is the legacy classic
script). That commit's dependencies are not all on the package index, so the tests use
the installed verifiers' own files and dependencies under that version and those script
names: what websandbox must cope with is the version number and the script names, and
both are exactly the pinned build's. The `vf-eval` script points at a module this build
does not have, so calling the eval by that name fails as the real build's would.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from importlib.metadata import distribution
from pathlib import Path

PINNED_VERSION = "0.3.1.dev62"
ENTRY_POINTS = """[console_scripts]
eval = verifiers.v1.cli.eval.main:main
validate = verifiers.v1.cli.validate:main
vf-eval = verifiers.legacy.scripts.eval:main
"""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_stand_in(out: Path) -> Path:
    """Write the stand-in wheel into `out`; returns its path."""
    dist = distribution("verifiers")
    package = Path(dist.locate_file("verifiers"))
    metadata = dist.read_text("METADATA") or ""
    metadata = "\n".join(f"Version: {PINNED_VERSION}" if line.startswith("Version:") else line for line in metadata.split("\n"))
    info = f"verifiers-{PINNED_VERSION}.dist-info"
    files: dict[str, bytes] = {}
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[f"verifiers/{path.relative_to(package).as_posix()}"] = path.read_bytes()
    files[f"{info}/METADATA"] = metadata.encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: websandbox-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/entry_points.txt"] = ENTRY_POINTS.encode()
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = out / f"verifiers-{PINNED_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return wheel
