"""The codebase's shape as docs/architecture.md states it (issue 16): packages import one
another without cycles, and no module grows past 800 lines. Read from the source with
`ast`, so a new import that closes a cycle fails here before it confuses a reader."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "paperdesk"


def _package(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _package_graph() -> dict[str, set[str]]:
    """Edges package → package from absolute `paperdesk.X` imports (relative imports stay
    inside a package by construction)."""
    edges: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        here = _package(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "paperdesk" and len(parts) > 1 and parts[1] != here:
                    edges.setdefault(here, set()).add(parts[1])
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(edges):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_sees_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_packages_import_each_other_without_cycles() -> None:
    graph = _package_graph()
    assert graph.get("store"), "the graph was not read"
    assert _cycles(graph) == []


def test_no_module_is_over_800_lines() -> None:
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800
    }
    assert not long


STAGES = {"ingest", "ingest_pool", "resolve", "subjects", "search", "pipeline", "web", "cli", "desk"}
# SQL as the store writes it (keywords in capitals), not prose that happens to say "select".
_SQL = re.compile(r"\b(?:SELECT\s+\S.*\bFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX))\b",
                  re.DOTALL)


def _imports(tree: ast.AST) -> list[str]:
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def test_only_the_store_touches_a_database_and_it_imports_no_stage() -> None:
    """Database drivers and SQL text live under store/ (store/sqlite, store/postgres, and
    store/sql for what both backends share); store/ imports no stage."""
    offenders: list[str] = []
    for path in SRC.rglob("*.py"):
        rel = str(path.relative_to(SRC))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mods = _imports(tree)
        if rel.startswith("store/"):
            offenders += [f"{rel} imports {m}" for m in mods
                          if m.startswith("paperdesk.") and m.split(".")[1] in STAGES]
            continue
        offenders += [f"{rel} imports {m}" for m in mods if m.split(".")[0] in ("sqlite3", "psycopg")]
        offenders += [f"{rel} has SQL: {n.value[:60]!r}" for n in ast.walk(tree)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str) and _SQL.search(n.value)]
    assert not offenders, offenders


def test_the_sql_finder_sees_sql() -> None:
    assert _SQL.search("SELECT work_id FROM works WHERE x = ?")
    assert _SQL.search("INSERT INTO records (key) VALUES (?)")
    assert not _SQL.search("Select a day from the list")
