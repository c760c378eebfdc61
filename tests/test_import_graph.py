"""The layers' import graph (ARCHITECTURE.md): editor -> lsp_server / cli / remote -> infill -> engine.

Every import of the installed packages counts: at the top of a module or inside a function, absolute or
relative, `importlib.import_module("...")` with a literal name, and the modules `cli.main.SUBCOMMANDS`
loads by name. An arrow a package may not draw fails the test with the file and line that draws it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from cli.main import SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[1]
# what each installed package may import of the others; everything not listed is an arrow running up
ALLOWED: dict[str, frozenset[str]] = {
    "engine": frozenset(),
    "infill": frozenset({"engine"}),
    "remote": frozenset({"infill", "engine"}),
    "lsp_server": frozenset({"infill", "remote"}),
    "cli": frozenset({"lsp_server", "remote", "infill", "engine"}),
}
NOT_INSTALLED = ("tests", "bench", "training")
OURS = (*ALLOWED, *NOT_INSTALLED)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, imported module) for every import in `source`, relative ones resolved against `module`."""
    found: list[tuple[int, str]] = []
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            name = ".".join([*base, node.module] if node.module else base)
            found.append((node.lineno, name))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def arrows() -> list[tuple[str, str, str]]:
    """(package, imported package, where) for every import of one of our packages by another."""
    out = []
    for package in ALLOWED:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = module_name(path)
            for line, name in imports_of(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"):
                target = name.split(".")[0]
                if target in OURS and target != package:
                    out.append((package, target, f"{path.relative_to(ROOT)}:{line} imports {name}"))
    out.extend(("cli", name.split(".")[0], f"cli/main.py SUBCOMMANDS loads {name}")
               for name, _, _ in SUBCOMMANDS if not name.startswith("cli."))
    return out


def test_no_arrow_runs_up_and_nothing_installed_imports_tests_or_bench() -> None:
    graph = arrows()
    drawn = {(source, target) for source, target, _ in graph}
    assert ("cli", "lsp_server") in drawn and ("lsp_server", "remote") in drawn  # the graph was read
    wrong = [
        f"{where} ({source} may import only {', '.join(sorted(ALLOWED[source])) or 'itself'})"
        for source, target, where in graph
        if target not in ALLOWED[source]
    ]
    assert not wrong, "\n".join(wrong)


def test_function_level_and_relative_imports_are_seen() -> None:
    source = "def late():\n    import lsp_server.session\n\nfrom ..engine import loader\nfrom . import spots\n"
    assert sorted(imports_of(source, "infill.sub.fill")) == [(2, "lsp_server.session"), (4, "infill.engine"), (5, "infill.sub")]
    assert imports_of("from .cli import main\n", "lsp_server", is_package=True) == [(1, "lsp_server.cli")]
    call = "import importlib\nimportlib.import_module('remote.client')\n"
    assert (2, "remote.client") in imports_of(call, "infill.x")
