"""What a Python module defines at its top level, summarised for a reader: signatures, the first paragraph of
a docstring, a class's fields and its methods' signatures. Bodies are left out (`...`)."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

from infill.languages import get_language

MAX_CLASS_LINES = 24
MAX_DOC_LINES = 3
MAX_LINE = 120


@dataclass(frozen=True)
class Definition:
    """`summary` keeps the first paragraph of docstrings, `brief` only the signatures; `kind` is "function",
    "class" or "constant"."""

    name: str
    line: int
    kind: str
    summary: str
    brief: str


@dataclass(frozen=True)
class ModuleInfo:
    """A module's top-level definitions by name, and the names it imports (name -> (module, level, original
    name)), which is how a package's `__init__` re-exports what its submodules define."""

    definitions: dict[str, Definition]
    imports: dict[str, tuple[str, int, str | None]]


def module_info(text: str) -> ModuleInfo:
    """`text`'s definitions and imports (cached by content: a file read again unchanged is not re-parsed)."""
    return _module_info(hashlib.blake2b(text.encode(), digest_size=16).digest(), text)


@functools.lru_cache(maxsize=256)
def _module_info(_digest: bytes, text: str) -> ModuleInfo:
    source = text.encode("utf-8")
    tree = get_language("python").parser().parse(source)
    definitions: dict[str, Definition] = {}
    for node in tree.root_node.children:
        for name, kind, summary, brief in _summaries(node, source):
            definitions.setdefault(name, Definition(name, node.start_point[0], kind, summary, brief))
    imports: dict[str, tuple[str, int, str | None]] = {}
    for statement in import_statements(tree.root_node):
        for bound, module, level, original in statement:
            imports[bound] = (module, level, original)
    return ModuleInfo(definitions, imports)


Imported = tuple[str, str, int, str | None]


def import_statements(root: Any) -> list[list[Imported]]:
    """Every import in the tree, outside function bodies, as (bound name, module, level, imported name):
    `from ..a.b import c as d` gives ("d", "a.b", 2, "c"); `import a.b` gives ("a", "a.b", 0, None)
    (the name bound is the top package; the module is what the file reads through it)."""
    found: list[list[Imported]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "import_statement":
            found.append(_plain_import(node))
        elif node.type == "import_from_statement":
            found.append(_from_import(node))
        elif node.type not in ("function_definition", "lambda"):
            stack.extend(reversed(node.children))
    return found


def without_imports(root: Any, text: str) -> str:
    """`text` with its import statements blanked out (line breaks kept, so lines keep their numbers)."""
    source = bytearray(text.encode("utf-8"))
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("import_statement", "import_from_statement", "future_import_statement"):
            for index in range(node.start_byte, node.end_byte):
                if source[index] != 0x0A:
                    source[index] = 0x20
        else:
            stack.extend(node.children)
    return source.decode("utf-8", "replace")


def _text(node: Any) -> str:
    return bytes(node.text).decode("utf-8", "replace")


def _plain_import(node: Any) -> list[Imported]:
    out: list[Imported] = []
    for child in node.named_children:
        if child.type == "dotted_name":
            module = _text(child)
            out.append((module.split(".")[0], module, 0, None))
        elif child.type == "aliased_import":
            name, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
            if name is not None and alias is not None:
                out.append((_text(alias), _text(name), 0, None))
    return out


def _from_import(node: Any) -> list[Imported]:
    module_node = node.child_by_field_name("module_name")
    if module_node is None:
        return []
    level, module = 0, _text(module_node)
    if module_node.type == "relative_import":
        prefix = next((c for c in module_node.children if c.type == "import_prefix"), None)
        level = len(_text(prefix)) if prefix is not None else 0
        dotted = next((c for c in module_node.children if c.type == "dotted_name"), None)
        module = _text(dotted) if dotted is not None else ""
    out: list[Imported] = []
    for child in node.children_by_field_name("name"):
        if child.type == "dotted_name":
            out.append((_text(child), module, level, _text(child)))
        elif child.type == "aliased_import":
            name, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
            if name is not None and alias is not None:
                out.append((_text(alias), module, level, _text(name)))
    return out


def _summaries(node: Any, source: bytes) -> list[tuple[str, str, str, str]]:
    """(name, kind, summary, brief) of what one top-level statement defines."""
    definition = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
    if definition is None:
        return []
    decorators = source[node.start_byte : definition.start_byte].decode("utf-8", "replace")
    if definition.type == "function_definition":
        name = _name(definition)
        return [(name, "function", decorators + _function(definition, source, True),
                 decorators + _function(definition, source, False))]
    if definition.type == "class_definition":
        name = _name(definition)
        return [(name, "class", decorators + _class(definition, source, True),
                 decorators + _class(definition, source, False))]
    if node.type == "expression_statement" and node.named_children:
        assignment = node.named_children[0]
        left = assignment.child_by_field_name("left") if assignment.type == "assignment" else None
        if left is not None and left.type == "identifier":
            line = _text(node).split("\n")[0]
            line = line if len(line) <= MAX_LINE else line[:MAX_LINE] + " ..."
            return [(_text(left), "constant", line, line)]
    return []


def _name(node: Any) -> str:
    name = node.child_by_field_name("name")
    return _text(name) if name is not None else ""


def _header(node: Any, source: bytes) -> str:
    """A def's or class's text up to its body, decorators left out; a long header keeps its own lines."""
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    return source[node.start_byte : end].decode("utf-8", "replace").rstrip()


def _docstring(body: Any, indent: str) -> list[str]:
    """The first paragraph of the docstring that opens `body`, at most MAX_DOC_LINES lines, as it reads."""
    first = body.named_children[0] if body is not None and body.named_children else None
    if first is None or first.type != "expression_statement" or not first.named_children:
        return []
    string = first.named_children[0]
    if string.type != "string":
        return []
    raw = _text(string)
    quote = raw[:3] if raw[:3] in ('"""', "'''") else raw[:1]
    inner = raw[len(quote) : len(raw) - len(quote)] if raw.endswith(quote) else raw[len(quote) :]
    paragraph = inner.strip().split("\n\n")[0].split("\n")
    lines = [line.strip() for line in paragraph[:MAX_DOC_LINES] if line.strip()]
    if not lines:
        return []
    if len(lines) == 1:
        return [f"{indent}{quote}{lines[0]}{quote}"]
    return [f"{indent}{quote}{lines[0]}", *(f"{indent}{line}" for line in lines[1:]), f"{indent}{quote}"]


def _function(node: Any, source: bytes, docs: bool) -> str:
    header = _header(node, source)
    doc = _docstring(node.child_by_field_name("body"), "    ") if docs else []
    if not doc:
        return f"{header} ..."
    return "\n".join([header, *doc, "    ..."])


def _class(node: Any, source: bytes, docs: bool) -> str:
    body = node.child_by_field_name("body")
    lines = [_header(node, source), *(_docstring(body, "    ") if docs else [])]
    for child in body.named_children if body is not None else []:
        if len(lines) >= MAX_CLASS_LINES:
            lines.append("    ...")
            break
        member = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
        if member is None:
            continue
        if member.type == "function_definition":
            name = _name(member)
            if name.startswith("_") and name != "__init__":
                continue
            lines.append("    " + _header(member, source) + " ...")
        elif member.type == "expression_statement" and member.named_children:
            statement = member.named_children[0]
            if statement.type == "assignment":
                line = _text(member).split("\n")[0]
                lines.append("    " + (line if len(line) <= MAX_LINE else line[:MAX_LINE] + " ..."))
    if len(lines) == 1:
        lines.append("    ...")
    return "\n".join(lines)
