"""bench/data/repo_context: the vendored packages are what their manifest says, and every hole is a line of
its file that uses a name defined in another file of its package."""

from __future__ import annotations

import ast
import json
from collections import Counter
from functools import cache
from pathlib import Path

from bench.repo_sources import sources
from training.sdist import canonical_name

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data" / "repo_context"
SOURCES = sources()
MANIFEST = json.loads((DATA / "MANIFEST.json").read_text(encoding="utf-8"))
HOLES = [json.loads(line) for line in (DATA / "holes.jsonl").read_text(encoding="utf-8").splitlines()]


@cache
def lines_of(folder: str, path: str) -> list[str]:
    return (SOURCES / folder / path).read_text(encoding="utf-8").split("\n")


@cache
def top_level_names(folder: str, path: str) -> frozenset[str]:
    """What a module defines at its top (and inside top-level if/else and try/except blocks)."""
    flat = list(ast.parse((SOURCES / folder / path).read_text(encoding="utf-8")).body)
    for stmt in list(flat):
        if isinstance(stmt, ast.If | ast.Try):
            flat += [*stmt.body, *stmt.orelse]
        if isinstance(stmt, ast.Try):
            flat += [s for handler in stmt.handlers for s in handler.body]
    names = {s.name for s in flat if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    names |= {t.id for s in flat if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)}
    names |= {s.target.id for s in flat if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    return frozenset(names)


def test_manifest_lists_exactly_the_vendored_files() -> None:
    total = 0
    for entry in MANIFEST["packages"]:
        folder = SOURCES / entry["folder"]
        on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        assert on_disk == entry["files"], entry["folder"]
        assert any(name.upper().startswith("LICENSE") for name in entry["files"])
        assert entry["licence"] in ("MIT", "BSD", "Apache-2.0")
        assert entry["first_release"]["uploaded"] >= "2025-01-01"
        assert len(entry["sdist_sha256"]) == 64
        total += sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert total < 1_600_000


def test_packages_are_not_in_the_training_corpus() -> None:
    corpus = json.loads((REPO / "training" / "corpus_manifest.json").read_text(encoding="utf-8"))
    seen = {canonical_name(p["name"]) for p in corpus["packages"]}
    assert not seen & {canonical_name(e["name"]) for e in MANIFEST["packages"]}


def test_enough_holes_from_enough_packages_within_the_caps() -> None:
    per_package = Counter(h["package"] for h in HOLES)
    assert len(HOLES) >= 200 and len(per_package) >= 5
    assert max(per_package.values()) <= 60
    assert max(Counter((h["package"], h["path"]) for h in HOLES).values()) <= 8
    assert len({(h["package"], h["path"], h["line"]) for h in HOLES}) == len(HOLES)
    assert MANIFEST["holes"] == len(HOLES)


def test_each_hole_is_its_line_and_uses_a_name_defined_elsewhere() -> None:
    for hole in HOLES:
        where = f"{hole['package']}/{hole['path']}:{hole['line'] + 1}"
        assert hole["line"] > 0, where
        assert lines_of(hole["package"], hole["path"])[hole["line"]] == hole["text"], where
        stripped = hole["text"].strip()
        assert 15 <= len(stripped) <= 100, where
        assert not stripped.startswith(("#", "@", "import ", "from ", "def ", "async def ", "class ")), where
        assert hole["names"] and hole["path"] not in hole["defined_in"], where
        statement = stripped[2:] if stripped.startswith("elif ") else stripped
        tree = ast.parse(statement + " pass" if statement.endswith(":") else statement)
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        for name in hole["names"]:
            assert name in used, (where, name)
            assert any(name in top_level_names(hole["package"], d) for d in hole["defined_in"]), (where, name)


def test_bench_tasks_leave_the_indentation_and_put_the_cursor_after_it() -> None:
    from bench.repo_context import generated_line, load_holes, make_task
    from infill.spots import Edit
    from infill.windows import plan_completion

    tasks = [make_task(hole) for hole in load_holes()]
    assert len(tasks) == len(HOLES)
    for task in tasks:
        hole = task.hole
        indent = hole.text[: len(hole.text) - len(hole.text.lstrip())]
        assert task.text.split("\n")[hole.line] == indent
        assert task.text[: task.offset].endswith("\n" + indent) and task.text[task.offset] == "\n"
        assert plan_completion(task.text, task.offset, "python") is not None, hole.task_id
        edit = Edit(task.offset, task.offset, hole.text.strip(), ())
        assert generated_line(task.text, hole.line, edit) == hole.text
    chosen = load_holes(["claude-code-sdk"])
    assert chosen and all(h.package.startswith("claude-code-sdk-") for h in chosen)
