"""Inside the packages: `engine/`'s sub-packages in their pipeline order, and no import circle in `engine/`,
`infill/` or `lsp_server/` (ARCHITECTURE.md, "The engine's folders").

Every import counts, at the top of a module, inside a function or under TYPE_CHECKING: a type-only import
that runs back up still ties the two layers together for the next reader, so it is a real arrow here.
`from package import name` draws an arrow to the module `package.name` when that is a module.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# engine's layers, top to bottom: a module may import its own layer (without a circle) or one below it
ENGINE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("engine", "engine.engine", "engine.batcher"),  # the front
    ("engine.families",),
    ("engine.loading",),
    ("engine.denoise",),
    ("engine.cache",),
    ("engine.models",),
    ("engine.kernels",),
    ("engine.api", "engine.types", "engine.params"),  # the records, torch-free
)


def modules(package: str) -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def edges(package: str) -> dict[str, dict[str, int]]:
    """module -> {imported module of the same package: the line of its first import}."""
    known = modules(package)
    out: dict[str, dict[str, int]] = {m: {} for m in known}
    for module, path in known.items():
        here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join([*here[: len(here) - node.level + 1], *([node.module] if node.module else [])]
                                if node.level else [node.module or ""])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            for target in targets:
                while target and target not in known:  # `import engine.models.layers as x` names a module
                    target = target.rpartition(".")[0]
                if target and target != module:
                    out[module].setdefault(target, node.lineno)
    return out


def layer_of(module: str) -> int:
    best, rank = -1, len(ENGINE_LAYERS)
    for i, layer in enumerate(ENGINE_LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    return rank


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
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
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_every_engine_module_has_a_layer() -> None:
    unplaced = [m for m in modules("engine") if layer_of(m) == len(ENGINE_LAYERS)]
    assert not unplaced, f"modules in no layer of ENGINE_LAYERS: {unplaced}"


def test_engine_imports_run_down_its_layers() -> None:
    graph = edges("engine")
    assert graph["engine.families.registry"], "the graph was read"
    up = [f"{modules('engine')[m].relative_to(ROOT)}:{line} imports {target} "
          f"(layer {layer_of(target)} above {layer_of(m)})"
          for m, targets in graph.items() for target, line in targets.items() if layer_of(target) < layer_of(m)]
    assert not up, "\n".join(up)


@pytest.mark.parametrize("package", ["engine", "infill", "lsp_server", "remote", "cli"])
def test_no_import_circle(package: str) -> None:
    found = circles(edges(package))
    assert not found, "; ".join(" <-> ".join(c) for c in found)


def test_a_back_arrow_or_a_circle_is_caught() -> None:
    graph = {"engine.kernels.projections": {"engine.models.layers": 3}, "engine.models.layers":
             {"engine.kernels.projections": 1}}
    assert circles(graph) == [["engine.kernels.projections", "engine.models.layers"]]
    assert layer_of("engine.models.layers") < layer_of("engine.kernels.projections")
    assert layer_of("engine.batcher") == 0 and layer_of("engine.types") == len(ENGINE_LAYERS) - 1


def test_the_front_loads_no_torch() -> None:
    """infill and the front doors import the records and the contract; torch comes with `Engine` only."""
    code = ("import sys, engine, engine.api, engine.batcher, engine.params, engine.types\n"
            "from engine import DenoiseParams, InfillRequest, SpecialTokens, ModelLoadError\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n"
            "from engine import Engine\n"
            "assert 'torch' in sys.modules and Engine.__name__ == 'Engine'\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
