"""Build bench/data/repo_context: vendored packages the corpus never saw, and their cross-file holes.

    python -m bench.repo_context_data vendor SDIST...   # add each sdist's package .py files and licence
                                                        # to sources.tar.gz (bench.repo_sources)
    python -m bench.repo_context_data holes [--seed 0]  # rewrite holes.jsonl from the vendored packages

A hole is one line of module M that uses, as an identifier, a name M imports from another module of the same
package (`from .x import f`, `from pkg.x import f`; no `as` rename) where that name is a function, class or
constant defined at the top of that module, or of the module its `__init__.py` re-exports it from (one hop);
a shared logger (`logger = logging.getLogger(...)`) does not count. The line must be a whole statement on
its own (or the one-line header of an `if`, `for`, `while` or `with`), 15-100 characters stripped, and
neither an import nor a `def`/`class` line: the line a user types while using the project's API, which the
file alone cannot tell the model. Lines that call the name with arguments or read its attributes go first;
each file gives at most PER_FILE, each package at most PER_PACKAGE, chosen with a seeded shuffle.

MANIFEST.json's `first_release`, `uploaded`, `in_training_corpus` and `python_files` were written from
PyPI's JSON API (every release's upload time) and training/corpus_manifest.json when the packages were
chosen; `vendor` keeps them when it copies a package again.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import shutil
import sys
import tarfile
import tempfile
from dataclasses import asdict
from pathlib import Path, PurePosixPath

from bench.repo_sources import ARCHIVE, DATA, Hole, pack, sources
from training.sdist import licence_family, read_sdist

HOLES = DATA / "holes.jsonl"
PER_FILE = 8
PER_PACKAGE = 60
SKIPPED_DIRS = re.compile(r"^(tests?|tests-integ|testing|examples?|docs?|scripts|benchmarks?)(/|$)")
SKIPPED_FILES = {"setup.py", "noxfile.py", "conftest.py"}
LICENCE_FILES = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE)(\.(txt|md|rst))?$", re.IGNORECASE)
HEADERS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)


def vendor(sdist: Path, root: Path) -> dict[str, object]:
    """Copy the package's own .py files and licence files of `sdist` to root/<name>-<version>/ (the
    sdist's layout; tests, examples, docs, build scripts and generated code marked DO NOT EDIT left
    out); its MANIFEST.json entry."""
    info = read_sdist(sdist)
    family = licence_family(info.licence_fields)
    if family is None:
        raise ValueError(f"{sdist.name}: no permissive licence in {info.licence_fields}")
    folder = root / f"{info.name}-{info.version}"
    shutil.rmtree(folder, ignore_errors=True)
    files: list[str] = []
    for path, text in info.python_files:
        if SKIPPED_DIRS.match(path) or path in SKIPPED_FILES or "DO NOT EDIT" in "".join(text.split("\n")[:3]):
            continue
        _write(folder / path, text.encode("utf-8"))
        files.append(path)
    for name, data in licence_files(sdist):
        _write(folder / name, data)
        files.append(name)
    return {"name": info.name, "version": info.version, "folder": folder.name, "licence": family,
            "licence_fields": list(info.licence_fields), "sdist": sdist.name,
            "sdist_sha256": hashlib.sha256(sdist.read_bytes()).hexdigest(), "files": sorted(files)}


def licence_files(sdist: Path) -> list[tuple[str, bytes]]:
    """(name, bytes) of the licence files at the top of a .tar.gz sdist (LICENSE, COPYING, NOTICE, ...)."""
    out = []
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            parts = PurePosixPath(member.name).parts
            handle = archive.extractfile(member) if member.isfile() and len(parts) == 2 else None
            if handle is not None and LICENCE_FILES.match(parts[1]):
                out.append((parts[1], handle.read()))
    return out


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def modules(folder: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under a package (a folder with __init__.py)."""
    found: dict[str, Path] = {}
    for path in sorted(folder.rglob("*.py")):
        parts = [path.stem] if path.name != "__init__.py" else []
        parent = path.parent
        while (parent / "__init__.py").exists() and parent != folder:
            parts.insert(0, parent.name)
            parent = parent.parent
        if parts and (path.parent / "__init__.py").exists():
            found[".".join(parts)] = path
    return found


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _top_level(tree: ast.Module) -> list[ast.stmt]:
    """The module's statements, with the bodies of top-level `if`/`try` blocks flattened in."""
    out: list[ast.stmt] = []
    for stmt in tree.body:
        out.append(stmt)
        if isinstance(stmt, ast.If):
            out += stmt.body + stmt.orelse
        elif isinstance(stmt, ast.Try):
            out += stmt.body + [s for h in stmt.handlers for s in h.body] + stmt.orelse
    return out


def _imports(tree: ast.Module, module: str, is_package: bool) -> list[tuple[str, str]]:
    """(name, source module) for each un-renamed `from M import name` at the top of the module."""
    return [(alias.name, _resolve(module, is_package, stmt)) for stmt in _top_level(tree)
            if isinstance(stmt, ast.ImportFrom) for alias in stmt.names
            if alias.asname in (None, alias.name) and alias.name != "*"]


def definitions(tree: ast.Module) -> set[str]:
    """Names the module defines at its top: functions, classes and assigned names."""
    names: set[str] = set()
    for stmt in _top_level(tree):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name) and not _is_logger(t.id, stmt.value))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names.add(stmt.target.id)
    return names


def _is_logger(name: str, value: ast.expr) -> bool:
    """A module's logger (`logger = logging.getLogger(...)`): every line that logs would be a hole, and
    `logger.info(...)` needs nothing from the other file."""
    func = value.func if isinstance(value, ast.Call) else None
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.lower().lstrip("_") in ("logger", "log") or called == "getLogger"


class Package:
    """The vendored folder's modules, parsed once, and where each imported name is defined."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files = modules(folder)
        self.trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in self.files.items()}

    def defined_at(self, name: str, module: str, hops: int = 1) -> str | None:
        """The module that defines `name` imported from `module` (None: not a definition of ours)."""
        tree = self.trees.get(module)
        if tree is None:
            return None
        if name in definitions(tree):
            return module
        if hops:
            for imported, source in _imports(tree, module, self.files[module].name == "__init__.py"):
                if imported == name:
                    return self.defined_at(name, source, hops - 1)
        return None

    def holes(self, module: str) -> list[tuple[int, Hole]]:
        """(priority, hole) for every line of `module` that may be a hole."""
        path = self.files[module]
        tree = self.trees[module]
        lines = path.read_text(encoding="utf-8").split("\n")
        crossing: dict[str, str] = {}
        for name, source in _imports(tree, module, path.name == "__init__.py"):
            where = self.defined_at(name, source)
            if where is not None and where != module:
                crossing[name] = self.files[where].relative_to(self.folder).as_posix()
        if not crossing:
            return []
        starts: dict[int, int] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt):
                starts[node.lineno] = starts.get(node.lineno, 0) + 1
        parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        out: list[tuple[int, Hole]] = []
        for stmt in ast.walk(tree):
            if not isinstance(stmt, ast.stmt):
                continue
            parts = _line_parts(stmt, lines)
            if parts is None or starts[stmt.lineno] != 1 or stmt.lineno == 1:
                continue
            used = [n for part in parts for n in ast.walk(part)
                    if isinstance(n, ast.Name) and n.id in crossing and isinstance(n.ctx, ast.Load)]
            if not used:
                continue
            names = sorted({n.id for n in used})
            priority = max(_priority(n, parents) for n in used)
            out.append((priority, Hole(self.folder.name, path.relative_to(self.folder).as_posix(),
                                       stmt.lineno - 1, lines[stmt.lineno - 1], tuple(names),
                                       tuple(sorted({crossing[n] for n in names})))))
        return out


def _line_parts(stmt: ast.stmt, lines: list[str]) -> list[ast.AST] | None:
    """The nodes written on the statement's first line when that line may be a hole, else None."""
    text = lines[stmt.lineno - 1]
    stripped = text.strip()
    if not 15 <= len(stripped) <= 100 or stripped.startswith(("#", "@")):
        return None
    if stmt.col_offset != len(text) - len(text.lstrip()):
        return None
    if isinstance(stmt, HEADERS):
        if isinstance(stmt, ast.If | ast.While):
            parts: list[ast.AST] = [stmt.test]
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            parts = [stmt.target, stmt.iter]
        else:
            parts = [item for i in stmt.items for item in (i.context_expr, i.optional_vars) if item]
        single = all(getattr(p, "end_lineno", stmt.lineno) == stmt.lineno for p in parts)
        return parts if single and stripped.endswith(":") else None
    simple = not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Try
                            | ast.Match | ast.Import | ast.ImportFrom)
    docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    if simple and not docstring and stmt.end_lineno == stmt.lineno:
        return [stmt]
    return None


def _priority(name: ast.Name, parents: dict[int, ast.AST]) -> int:
    """2: called with arguments or an attribute read; 1: called bare; 0: any other use."""
    parent = parents.get(id(name))
    if isinstance(parent, ast.Attribute):
        return 2
    if isinstance(parent, ast.Call) and parent.func is name:
        return 2 if parent.args or parent.keywords else 1
    return 0


def choose(candidates: list[tuple[int, Hole]], seed: int, package: str) -> list[Hole]:
    """Up to PER_PACKAGE holes, at most PER_FILE a file: best priority first, a seeded shuffle within."""
    rng = random.Random(f"{seed}/{package}")
    pool = list(candidates)
    rng.shuffle(pool)
    pool.sort(key=lambda item: -item[0])
    chosen: list[Hole] = []
    per_file: dict[str, int] = {}
    for _, hole in pool:
        if len(chosen) >= PER_PACKAGE:
            break
        if per_file.get(hole.path, 0) < PER_FILE:
            per_file[hole.path] = per_file.get(hole.path, 0) + 1
            chosen.append(hole)
    return sorted(chosen, key=lambda h: (h.path, h.line))


def all_holes(seed: int, root: Path | None = None) -> list[Hole]:
    """The holes of every package in the manifest, read from `root` (the unpacked sources by default)."""
    root = root or sources()
    manifest = json.loads((DATA / "MANIFEST.json").read_text(encoding="utf-8"))
    out: list[Hole] = []
    for entry in manifest["packages"]:
        package = Package(root / entry["folder"])
        candidates = [c for module in package.files for c in package.holes(module)]
        out += choose(candidates, seed, entry["folder"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.repo_context_data", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    vendoring = sub.add_parser("vendor", help="copy sdists into bench/data/repo_context (MANIFEST.json entries)")
    vendoring.add_argument("sdists", nargs="+", type=Path)
    holes = sub.add_parser("holes", help="rewrite holes.jsonl from the vendored folders")
    holes.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    manifest_path = DATA / "MANIFEST.json"
    manifest = (json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists()
                else {"packages": []})
    if args.command == "vendor":
        entries = {e["folder"]: e for e in manifest["packages"]}
        with tempfile.TemporaryDirectory() as work:
            folder = Path(work) / "sources"
            if ARCHIVE.exists():
                shutil.copytree(sources(), folder)
            for sdist in args.sdists:
                entry = vendor(sdist, folder)
                entries[str(entry["folder"])] = {**entries.get(str(entry["folder"]), {}), **entry}
            pack(folder)
        manifest["packages"] = [entries[k] for k in sorted(entries)]
    else:
        found = all_holes(args.seed)
        HOLES.write_text("".join(json.dumps(asdict(h)) + "\n" for h in found), encoding="utf-8")
        manifest["holes_seed"], manifest["holes"] = args.seed, len(found)
        for entry in manifest["packages"]:
            entry["holes"] = sum(h.package == entry["folder"] for h in found)
        print(f"{len(found)} holes: {({e['folder']: e['holes'] for e in manifest['packages']})}", file=sys.stderr)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
