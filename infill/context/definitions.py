"""The definitions a Python file imports from its own workspace, as chunks.

`from .shapes import Box` and `from pkg.shapes import Box` find `Box` in `shapes.py` (through one or two
re-exporting `__init__.py`s); `import pkg.shapes as s` gives the definitions of `shapes` that the text near
the cursor names (`s.Box(` names `Box`). Modules outside the workspace (the standard library, installed
packages) are not read: the model knows the popular ones, and the rest would crowd out the project's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from infill.context.chunks import Chunk
from infill.context.python_defs import Definition, import_statements, module_info, without_imports
from infill.context.recent import identifiers
from infill.languages import get_language


class Workspace(Protocol):
    """What finding definitions reads of a workspace (`infill.context.builder.ContextBuilder`): its root (None:
    no workspace), a path as chunks name it, and a file's text as the user sees it."""

    @property
    def root(self) -> Path | None: ...

    def relative(self, path: Path) -> str: ...

    def read(self, path: Path) -> str | None: ...


NEAR, UNUSED, IN_FILE, IMPORTED = 3.0, 2.5, 2.0, 1.0
"""Scores: a name used near the cursor; imported and not used yet (what a user who has just written the
import is about to use); used elsewhere in the file; brought by a module import only. A constant scores
CONSTANT less than a function or class with the same use: a logger or a default value is rarely the reason
to look."""
CONSTANT = 0.5
MAX_HOPS = 2


def imported_definitions(builder: Workspace, here: Path, text: str, line: int, near_lines: int
                         ) -> list[Chunk]:
    """Chunks for what `text` (the file at `here`) imports from the workspace, scored by where it is used:
    within `near_lines` of 0-based `line` (the cursor's), elsewhere, or not yet (import statements aside)."""
    if builder.root is None:
        return []
    tree = get_language("python").parse(text)
    code = without_imports(tree.root_node, text).split("\n")
    used = identifiers("\n".join(code))
    near = identifiers("\n".join(code[max(0, line - near_lines) : line + near_lines + 1]))
    chunks: dict[tuple[str, str], Chunk] = {}
    for statement in import_statements(tree.root_node):
        for bound, module, level, original in statement:
            score = NEAR if bound in near else IN_FILE if bound in used else UNUSED
            for path, definition in _resolve(builder, here, module, level, original, near):
                relative = builder.relative(path)
                specific = score if original is not None else NEAR if definition.name in near else IMPORTED
                specific -= CONSTANT if definition.kind == "constant" else 0.0
                chunk = Chunk(relative, definition.summary, "definition", definition.line, specific)
                previous = chunks.get((relative, definition.name))
                if previous is None or previous.score < chunk.score:
                    chunks[(relative, definition.name)] = chunk
    return list(chunks.values())


def _resolve(builder: Workspace, here: Path, module: str, level: int, name: str | None,
             near: frozenset[str]) -> Iterator[tuple[Path, Definition]]:
    """The workspace definitions an import brings: `name` from `module` (following re-exports), or, for a
    module (`import a.b`, or `from a import b` where `b` is a submodule), its definitions that `near` names."""
    if name is not None:
        path = _module_path(builder, here, module, level)
        if path is not None and (found := _find(builder, path, name, MAX_HOPS)) is not None:
            yield found
            return
        module = f"{module}.{name}" if module else name
    path = _module_path(builder, here, module, level)
    source = builder.read(path) if path is not None else None
    if path is None or source is None:
        return
    for definition in module_info(source).definitions.values():
        if definition.name in near:
            yield path, definition


def _find(builder: Workspace, path: Path, name: str, hops: int) -> tuple[Path, Definition] | None:
    """`name`'s definition in the module at `path`, or where that module imports it from (`hops` deep)."""
    source = builder.read(path)
    if source is None:
        return None
    info = module_info(source)
    if name in info.definitions:
        return path, info.definitions[name]
    if hops == 0 or name not in info.imports:
        return None
    module, level, original = info.imports[name]
    target = _module_path(builder, path, module, level)
    if target is None or original is None:
        return None
    return _find(builder, target, original, hops - 1)


def _module_path(builder: Workspace, here: Path, module: str, level: int) -> Path | None:
    """The workspace file of `module` imported from the file `here` (`level` dots: relative), or None."""
    parts = [p for p in module.split(".") if p]
    if level > 0:
        base = here.parent
        for _ in range(level - 1):
            base = base.parent
        return _module_file(base, *parts) if parts else _module_file(base)
    assert builder.root is not None
    bases = [builder.root, builder.root / "src", *(p for p in here.parents if p.is_relative_to(builder.root))]
    for base in dict.fromkeys(bases):
        if (found := _module_file(base, *parts)) is not None:
            return found
    return None


def _module_file(base: Path, *parts: str) -> Path | None:
    """`base/a/b.py` or `base/a/b/__init__.py` for parts (a, b); `base/__init__.py` for none."""
    folder = base.joinpath(*parts)
    if parts and (candidate := folder.with_suffix(".py")).is_file():
        return candidate
    if (candidate := folder / "__init__.py").is_file():
        return candidate
    return None
