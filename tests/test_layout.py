"""The house rules of the source tree: the engine (solver/) imports no game, its modules import one
another without circles, and the old fused kernel is neither built nor shipped."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
SOLVER = ROOT / "solver"


def module_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return "gamesolver." + ".".join(parts)


def imports(path: Path) -> set[str]:
    """Every module a Python file imports (at the top or inside a function), or a Cython file
    imports or cimports, as absolute names."""
    text = path.read_text(encoding="utf-8")
    found: set[str] = set()
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
    else:
        for m in re.finditer(r"^\s*(?:from\s+([\w.]+)\s+c?import\s+([\w, ]+)|c?import\s+([\w.]+))", text, re.M):
            if m.group(1):
                found.add(m.group(1))
                found.update(f"{m.group(1)}.{n.strip()}" for n in m.group(2).split(",") if n.strip())
            else:
                found.add(m.group(3))
    return found


def engine_files() -> list[Path]:
    return sorted(p for p in SOLVER.rglob("*") if p.suffix in (".py", ".pyx", ".pxd"))


def test_the_engine_imports_no_game() -> None:
    offenders = {str(p.relative_to(ROOT)): sorted(m for m in imports(p) if m.startswith("gamesolver.games"))
                 for p in engine_files()}
    assert not {k: v for k, v in offenders.items() if v}


def test_the_engines_modules_import_without_circles() -> None:
    names = {module_of(p) for p in engine_files()}
    graph = nx.DiGraph()
    for p in engine_files():
        me = module_of(p)
        graph.add_node(me)
        for m in imports(p):
            if m in names and m != me and not me.startswith(m + "."):
                graph.add_edge(me, m)
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, cycles
    assert graph.number_of_edges() > 20  # the walk above sees the imports (the test means something)


def test_the_gpu_backend_imports_one_way() -> None:
    gpu = SOLVER / "backends" / "gpu"
    assert "gamesolver.solver.backends.gpu.driver" not in imports(gpu / "cuda_kernels.py")
    assert not any(m.startswith("gamesolver.solver.backends.gpu.") for m in imports(gpu / "arithmetic.py"))


def test_the_old_fused_kernel_is_gone() -> None:
    assert not list(ROOT.glob("games/ur/_kernel_v1.*"))
    assert "_kernel_v1" not in (ROOT / "setup.py").read_text(encoding="utf-8")


def _package_files() -> dict[str, Path]:
    return {module_of(p): p for top in ("solver", "games") for p in (ROOT / top).rglob("*.py")}


def test_the_server_and_the_answers_import_no_command_line_module() -> None:
    """The browser board answers from the games' answers modules, as the commands do; neither the
    server nor an answers module reaches a module that defines a command or prints for one
    (click.echo), directly or through others."""
    files = _package_files()
    command = re.compile(r"^@(?:click|[\w.]+)\.(?:command|group)\(|click\.s?echo\(", re.M)
    uses_click = {m for m, p in files.items() if command.search(p.read_text(encoding="utf-8"))}
    assert {"gamesolver.games.ur.cli", "gamesolver.games.unee.cli_board"} <= uses_click
    graph = nx.DiGraph()
    for m, p in files.items():
        graph.add_edges_from((m, n) for n in imports(p) if n in files and n != m)
    servers = [m for m in files if m.startswith("gamesolver.games.web.") and not m.endswith(".cli")]
    answers = [m for m in files if m.rsplit(".", 1)[-1] in ("answers", "royal_answers")]
    assert len(answers) == 3 and "gamesolver.games.web.app" in servers
    for m in servers + answers:
        reached = nx.descendants(graph, m) | {m}
        assert not reached & uses_click, (m, sorted(reached & uses_click))


def test_the_package_imports_without_circles() -> None:
    """No circle anywhere in solver/ and games/, counting the imports inside functions (which
    would hide one from Python's import order but not from a reader)."""
    files = {module_of(p): p for top in ("solver", "games") for p in (ROOT / top).rglob("*")
             if p.suffix in (".py", ".pyx", ".pxd")}
    graph = nx.DiGraph()
    for m, p in files.items():
        graph.add_edges_from((m, n) for n in imports(p) if n in files and n != m and not m.startswith(n + "."))
    assert graph.number_of_edges() > 200
    assert not list(nx.simple_cycles(graph))


def test_the_ur_commands_ask_one_family_interface() -> None:
    """The Ur commands are click only: they ask the rule family --rules names (games.ur.family)
    and never which family they hold; the families and the tables print nothing."""
    ur_dir = ROOT / "games" / "ur"
    allowed = {"gamesolver.games.ur.cli_common", "gamesolver.games.ur.family", "gamesolver.games.ur.solve",
               "gamesolver.games.ur.opening", "gamesolver.games.ur.api", "gamesolver.games.ur.rules",
               "gamesolver.games.ur.cli_opening", "gamesolver.games.ur.cli_solve"}
    for name in ("cli.py", "cli_solve.py", "cli_opening.py", "cli_common.py"):
        text = (ur_dir / name).read_text(encoding="utf-8")
        games = {m for m in imports(ur_dir / name) if m.startswith("gamesolver.games.") and m != "gamesolver.games.ur"}
        others = {m for m in games if not any(m == a or m.startswith(a + ".") for a in allowed)}
        assert not others, (name, sorted(others))
        if name != "cli_common.py":  # where --rules is read (``pick``)
            assert not re.search(r"royal\.|is_fort|FortFamily|RoyalFamily|fort_only|UrOptions", text), name
    for name in ("family.py", "fort_family.py", "royal_family.py", "tables.py", "api.py"):
        text = (ur_dir / name).read_text(encoding="utf-8")
        assert "import click" not in text and "print(" not in text, name
