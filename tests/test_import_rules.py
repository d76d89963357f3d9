"""The package's import rules, kept by a test: layers that only import downward, no cycle, no stray stack.

docs/architecture.md ("Import rules") states them; this test reads every module of
`sandbox_env` with `ast` (nothing is imported) and fails on any rule broken:

- each top-level part of the package sits in a layer (LAYERS) and imports only parts of
  its own layer or below: the sandbox layer never reaches grading, families or a front
  door; families and the generator never reach verify or a front door; the rollout core never reaches a
  front door;
- `runtime/` (programs that run inside containers) imports nothing of `sandbox_env`
  outside `runtime/`; its two trust zones are two folders: `runtime/container/` (every
  container has it) never imports a module of `runtime/grader/` (only grading containers
  get those), and a grader imports of `runtime/container/` only the modules shipped with it
  (grading/programs.py, SHARED_RUNTIME). Container programs import their neighbours by bare
  name (`import ops`), as the image runs them, so the rule is read from bare names too;
- the parts below the front doors import no verifiers, so both stacks share them;
- only the sandbox layer imports a backend (`sandbox_env.sandbox.docker`) or the docker
  SDK: everything above asks the registry for a backend and its tools by name;
- the installed package imports nothing from the checkout's root (tests, bench,
  build_tasks, environments);
- no two modules import each other, directly or through others (no cycle);
- only verification (verify/, stages/) imports the graders that let deliverables share a sandbox.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import sandbox_env
from sandbox_env.constants import CONTAINER_PROGRAMS_DIR, GRADER_PROGRAMS_DIR, RUNTIME_DIR
from sandbox_env.grading.programs import SHARED_RUNTIME

PACKAGE = Path(sandbox_env.__file__).resolve().parent
LAYERS = {
    0: {"constants", "text", "runtime", "__init__"},
    1: {"sandbox", "dataset", "pass_rates", "viewer"},
    2: {"grading"},
    3: {"families", "generate"},
    4: {"verify", "rollout"},
    5: {"doors", "policy", "stages"},
    6: {"cli"},
}
LAYER_OF = {part: layer for layer, parts in LAYERS.items() for part in parts}
NO_VERIFIERS_BELOW = 5  # front doors and what stands on them may import verifiers; nothing under them
ROOT_MODULES = {"tests", "bench", "build_tasks", "environments", "websandbox", "conftest"}


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        rel = f.relative_to(PACKAGE)
        if rel.parts[0] in {"tasks", "data"} or "__pycache__" in rel.parts:
            continue
        parts = ["sandbox_env", *rel.with_suffix("").parts]
        if parts[-1] == "__init__" and len(parts) > 2:
            parts.pop()
        out[".".join(parts)] = f
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Every module name an import statement of the file names (resolved relative imports included)."""
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found |= {f"{module}.{a.name}" for a in node.names}
    return found


MODULES = _modules()
IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_part_of_the_package_has_a_layer():
    assert sorted({_part(m) for m in MODULES} - set(LAYER_OF)) == []


def test_each_part_imports_only_its_own_layer_or_below():
    broken = []
    for name, found in IMPORTS.items():
        mine = LAYER_OF[_part(name)]
        for other in found:
            if other.startswith("sandbox_env.") and other in MODULES and LAYER_OF[_part(other)] > mine:
                broken.append(f"{name} imports {other} (layer {LAYER_OF[_part(other)]} > {mine})")
    assert broken == []


def test_the_container_programs_import_nothing_of_the_host_package():
    broken = [
        f"{name} imports {o}"
        for name, found in IMPORTS.items()
        if _part(name) == "runtime"
        for o in found
        if o.startswith("sandbox_env") and not o.startswith("sandbox_env.runtime")
    ]
    assert broken == []


def _bare_imports(path: Path) -> set[str]:
    """The first name of every absolute import of a container program (`import ops` -> ops)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def _zone(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"}


def test_container_programs_never_import_a_grader_program():
    graders = _zone(GRADER_PROGRAMS_DIR)
    broken = [
        f"{p.relative_to(PACKAGE)} imports {name}"
        for p in CONTAINER_PROGRAMS_DIR.rglob("*.py")
        for name in _bare_imports(p) & graders
    ]
    assert broken == []


def test_grader_programs_import_of_the_container_side_only_what_is_shipped_with_them():
    shipped = {Path(name).stem for name in SHARED_RUNTIME}
    broken = [
        f"{p.relative_to(PACKAGE)} imports {name}"
        for p in GRADER_PROGRAMS_DIR.rglob("*.py")
        for name in _bare_imports(p) & _zone(CONTAINER_PROGRAMS_DIR)
        if name not in shipped
    ]
    assert broken == []


def test_runtime_holds_nothing_outside_its_two_zones():
    loose = sorted(p.name for p in RUNTIME_DIR.iterdir() if p.name not in {"container", "grader", "__pycache__"})
    assert loose == []


def test_nothing_under_the_front_doors_imports_verifiers():
    broken = [
        name
        for name, found in IMPORTS.items()
        if LAYER_OF[_part(name)] < NO_VERIFIERS_BELOW and any(o == "verifiers" or o.startswith("verifiers.") for o in found)
    ]
    assert broken == []


def test_only_the_sandbox_layer_imports_the_docker_backend_or_the_docker_sdk():
    broken = [f"{name} imports {o}" for name, found in IMAGES_OR_BACKEND.items() if _part(name) != "sandbox" for o in found]
    assert broken == []


IMAGES_OR_BACKEND = {
    name: {o for o in found if o.split(".")[0] == "docker" or o.startswith("sandbox_env.sandbox.docker")}
    for name, found in IMPORTS.items()
}


def test_the_package_imports_nothing_from_the_checkouts_root():
    broken = [f"{name} imports {o}" for name, found in IMPORTS.items() for o in found if o.split(".")[0] in ROOT_MODULES]
    assert broken == []


def test_no_module_imports_itself_through_others():
    edges = {n: {o for o in found if o in MODULES and o != n and not n.startswith(o + ".")} for n, found in IMPORTS.items()}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_readmes_layout_table_names_every_top_level_part():
    readme = (PACKAGE.parent / "README.md").read_text()
    table = readme[readme.index("## Layout") : readme.index("## Decisions")]
    named = {name.rstrip("/").split("/")[-1] for name in re.findall(r"`([\w./]+)`", table)}
    parts = {p.name for p in PACKAGE.iterdir() if not p.name.startswith(("__", "."))}
    assert sorted(parts - named) == []


AGREED_TOP = {"pyproject.toml", "README.md", "sandbox_env", "images", "build_tasks.py", "tests", "environments"}


def test_the_checkout_keeps_its_agreed_top_level_with_one_copy_of_the_package():
    import subprocess

    root = PACKAGE.parent
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    top = {path.split("/")[0] for path in tracked}
    assert sorted(AGREED_TOP - top) == []
    assert {"images/Dockerfile", "images/requirements.txt"} <= set(tracked)
    copies = sorted({p.split("sandbox_env/")[0] for p in tracked if "sandbox_env/__init__.py" in p})
    assert copies == [""], f"a second copy of sandbox_env is tracked: {copies}"
    assert not [p for p in tracked if p.startswith("sandbox_env/images/")]
    readme = (root / "README.md").read_text()
    table = readme[readme.index("## Layout") : readme.index("## Decisions")]
    assert "| `images/` |" in table


def test_the_agents_operations_are_named_only_in_their_one_module():
    from sandbox_env.runtime.container import ops

    names = "|".join(sorted(ops.ALL))
    sent = re.compile(rf"[\"']op[\"']\s*:\s*[\"']({names})[\"']")  # a request written with a literal name
    served = re.compile(rf"\bop\s*(==|in)\s*\(?[\"']({names})[\"']")  # the agent's dispatch on a literal name
    host = [p for p in (PACKAGE / "sandbox").rglob("*.py") if sent.search(p.read_text())]
    agent = CONTAINER_PROGRAMS_DIR / "agent.py"
    assert [p.relative_to(PACKAGE).as_posix() for p in host] == []
    assert served.findall(agent.read_text()) == []
    assert "import ops" in agent.read_text()


SHARED_SANDBOX_GRADING = {"sandbox_env.grading.reused", "sandbox_env.verify.batched"}
MAY_SHARE_A_GRADING_SANDBOX = {"verify", "stages"}  # verification of the project's own deliverables


def test_only_verification_grades_in_a_shared_sandbox():
    """A rollout's deliverable is graded alone in a fresh sandbox: no path a rollout takes reaches the
    graders that let several deliverables share one (grading/reused.py, verify/batched.py)."""
    users = {name for name, found in IMPORTS.items() if name not in SHARED_SANDBOX_GRADING and found & SHARED_SANDBOX_GRADING}
    assert users and all(_part(name) in MAY_SHARE_A_GRADING_SANDBOX for name in users), sorted(users)
