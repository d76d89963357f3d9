"""Where the vf-eval that `websandbox eval` starts saves its run, found the way vf-eval finds it.

vf-eval 0.3.1 saves to `<output dir>/evals/<env>--<model>/<8 hex>/`, the output dir being
`--output-dir`, else `./environments/<env>/outputs` when that folder exists in the
directory it runs in (a checkout), else `./outputs`. `websandbox eval` runs vf-eval in
the caller's directory, so a run never lands inside site-packages when the package is
installed from a wheel, and reads the command line it built (passed-through arguments
included) with vf-eval's own parser, so `-- -m NAME` or `-- --output-dir DIR` are
followed rather than guessed.

The run folder's name is a random id vf-eval picks. vf-eval logs it ("Saving results to
PATH") as it opens the folder, and `websandbox eval` reads that line off its output
(`see`): that is the run, whatever other runs write beside it. Until the line is seen (or
when a passed-through argument silences the log), the run is the folder that was not there
before vf-eval started; with `--resume PATH` it is PATH, and with a bare `--resume`
(vf-eval picks the newest incomplete run) the folder written since the start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sandbox_env.constants import ENV_ID

RESULTS = "results.jsonl"
# what vf-eval logs when it opens and when it finishes a run's folder
REPORTED = re.compile(r"Sav(?:ing|ed final) results to (\S.*?)\s*$")
METADATA = "metadata.json"
CLOCK_SLACK = 1.0  # seconds: file times come from a coarser clock than time.time()


@dataclass
class RunLocation:
    """Where one vf-eval invocation will save: its runs folder, and the run itself once known."""

    runs_dir: Path
    resume_path: Path | None = None
    since: float = 0.0
    before: set[Path] = field(default_factory=set)
    cwd: Path = field(default_factory=Path.cwd)
    reported: Path | None = None

    def see(self, line: str) -> None:
        """One line of vf-eval's output: the run's folder when vf-eval names it."""
        found = REPORTED.search(line)
        if found:
            path = Path(found.group(1))
            self.reported = path if path.is_absolute() else self.cwd / path

    def snapshot(self, since: float) -> None:
        """Remember the runs that exist now, before vf-eval starts."""
        self.since = since
        self.before = {p for p in self.runs_dir.glob("*") if p.is_dir()}

    def find(self) -> Path | None:
        """The run vf-eval is writing (or wrote): the one it named, the resumed one, a new one, or one written since."""
        if self.reported is not None:
            return self.reported if (self.reported / RESULTS).is_file() else None
        if self.resume_path is not None:
            return self.resume_path if (self.resume_path / RESULTS).is_file() else None
        runs = [p for p in self.runs_dir.glob("*") if (p / RESULTS).is_file() or (p / METADATA).is_file()]
        new = [p for p in runs if p not in self.before]
        if new:
            return max(new, key=_written)
        recent = [p for p in runs if _written(p) >= self.since - CLOCK_SLACK]
        return max(recent, key=_written) if recent else None


def _written(run: Path) -> float:
    return max((f.stat().st_mtime for f in (run / RESULTS, run / METADATA) if f.is_file()), default=0.0)


def own_location(model: str, cwd: Path, resume: str | bool | None = None) -> RunLocation:
    """Where vf-eval saves for the command line `websandbox eval` builds when nothing is passed on.

    vf-eval's rule (verifiers' `get_eval_runs_dir`), applied here because reading our own
    command line with vf-eval's parser would import verifiers' whole stack into this
    process: seconds of CPU before vf-eval, which imports it anyway, even starts.
    """
    base = cwd / "environments" / ENV_ID.replace("-", "_")
    runs = (base / "outputs" if base.exists() else cwd / "outputs") / "evals" / f"{ENV_ID}--{model.replace('/', '--')}"
    return RunLocation(runs_dir=runs, resume_path=cwd / resume if isinstance(resume, str) else None, cwd=cwd)


def locate(vf_eval_args: list[str], cwd: Path) -> RunLocation:
    """Where `vf-eval *vf_eval_args` run in `cwd` saves, read with vf-eval's own argument parser."""
    from verifiers.cli.commands.eval import build_parser
    from verifiers.utils.path_utils import get_eval_runs_dir

    parser = build_parser()
    parser.prog = "vf-eval"  # its complaints are about the arguments passed on after `--`
    args = parser.parse_args(vf_eval_args)
    runs = Path(get_eval_runs_dir(args.env_id_or_config, args.model, str(cwd / args.env_dir_path), args.output_dir))
    resume = Path(args.resume) if isinstance(args.resume, str) else None
    return RunLocation(runs_dir=cwd / runs, resume_path=None if resume is None else cwd / resume, cwd=cwd)
