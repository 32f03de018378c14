"""The studio's import graph: every module under studio/, the modules each imports
(lazy imports inside functions included, since they run too), and its import
circles (strongly connected groups of two or more modules).

    .venv/bin/python scripts/import_graph.py             # the count and any circle
    .venv/bin/python scripts/import_graph.py --packages  # and the arrows between packages

Exits 1 when there is a circle.
"""
from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "studio"


def modules() -> dict[str, Path]:
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = p.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the studio modules it imports (a name imported from a package counts as the
    submodule when there is one)."""
    def known(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("studio")}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.startswith("studio"):
                    found.add(target)
                    found |= {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods}
        graph[name] = {known(t) for t in found} - {"", name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    group = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        group.append(w)
                        if w == v:
                            break
                    if len(group) > 1:
                        out.append(sorted(group))
    return out


def package_arrows(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    def pkg(m: str) -> str:
        return ".".join(m.split(".")[:2])
    arrows: dict[str, set[str]] = defaultdict(set)
    for m, targets in graph.items():
        arrows[pkg(m)] |= {pkg(t) for t in targets if pkg(t) != pkg(m)}
    return arrows


def main(argv: list[str]) -> int:
    graph = imports(modules())
    found = circles(graph)
    print(f"modules {len(graph)}, imports {sum(map(len, graph.values()))}, "
          f"circles (strongly connected groups): {len(found)}")
    for group in found:
        print("  circle:", " <-> ".join(group))
    if "--packages" in argv:
        for p, targets in sorted(package_arrows(graph).items()):
            print(f"{p} -> {', '.join(sorted(targets)) or '(nothing)'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
