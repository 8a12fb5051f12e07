"""Imports point one way (channels_bridge -> facilitation -> rooms): the import-linter contracts hold."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept():
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" in result.stdout and "0 broken" in result.stdout


def _module_cycles() -> list[list[str]]:
    """Strongly connected components of the project's module graph, function-level imports included
    (a module importing its own parent package does not count)."""
    import grimp

    graph = grimp.build_graph("config", "rooms", "facilitation", "channels_bridge")
    modules = sorted(m for m in graph.modules if ".migrations" not in m)
    known = set(modules)

    def parents(m):
        parts = m.split(".")
        return {".".join(parts[:i]) for i in range(1, len(parts))}

    edges = {m: [t for t in graph.find_modules_directly_imported_by(m) if t in known and t not in parents(m)] for m in modules}
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan, iterative enough for this graph size
        index[v] = low[v] = counter[0]
        counter[0] += 1
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

    sys.setrecursionlimit(10000)
    for m in modules:
        if m not in index:
            visit(m)
    return cycles


def test_no_import_cycles_even_through_function_level_imports():
    assert _module_cycles() == []


def test_every_room_kind_registers_its_steps_at_app_start():
    from facilitation.runs import registry

    registered = registry.registered()
    assert {"discussion", "workspace"} <= set(registered["planners"])
    assert {"opening", "turn", "evaluation", "synthesis"} <= set(registered["handlers"])
    assert {"workspace.agent", "workspace.clock", "workspace.narrative"} <= set(registered["handlers"])
