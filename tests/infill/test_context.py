"""The repository-context builder: import resolution, the recent ring, the budget, stable headers."""

from __future__ import annotations

from pathlib import Path

import pytest

from infill.context import Chunk, ContextBuilder, repo_root
from infill.context.chunks import format_chunks
from infill.context.outline import outline_beyond
from infill.context.recent import RecentRing
from tests.support.checkpoints import tiny_tokenizer

TOKENIZER = tiny_tokenizer()

SHAPES = '''"""Shapes on a page."""
import math

LIMIT = 40


@dataclass
class Box:
    """A box on the page.

    Longer text the summary leaves out.
    """

    left: int
    top: int = 0

    def area(self) -> float:
        return 1.0

    def _hidden(self):
        pass


def scaled_box(corner_left, corner_top, stretch_factor):
    """Scale a box by a factor."""
    return Box(corner_left, corner_top)


def unrelated(value):
    return value
'''


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def build(root: Path, name: str, text: str | None = None, budget: int = 512, **kwargs: object) -> tuple:
    builder = ContextBuilder(root, TOKENIZER, budget=budget, **kwargs)  # type: ignore[arg-type]
    text = (root / name).read_text() if text is None else text
    return builder, builder.build(root / name, text, len(text), "python")


def titles(context: object) -> list[tuple[str, str, str]]:
    return [(c.kind, c.path, c.title) for c in context.chunks]  # type: ignore[attr-defined]


@pytest.mark.parametrize("importer", [
    "from .shapes import scaled_box\n",
    "from pkg.shapes import scaled_box\n",
    "from pkg import scaled_box\n",  # re-exported by pkg/__init__.py
    "from . import scaled_box as make\n",
])
def test_a_function_imported_from_a_sibling_module_comes_with_its_signature_and_docstring(
        tmp_path: Path, importer: str) -> None:
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "from .shapes import scaled_box, Box\n",
                     "pkg/shapes.py": SHAPES, "pkg/main.py": importer + "\nbox = "})
    _, context = build(tmp_path, "pkg/main.py")
    assert titles(context) == [("definition", "pkg/shapes.py",
                                "def scaled_box(corner_left, corner_top, stretch_factor):")]
    assert context.header == (
        "# pkg/shapes.py\ndef scaled_box(corner_left, corner_top, stretch_factor):\n"
        '    """Scale a box by a factor."""\n    ...\n\n')


def test_a_class_comes_with_its_decorators_fields_and_public_method_signatures(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/__init__.py": "", "pkg/shapes.py": SHAPES,
                     "pkg/main.py": "from pkg.shapes import Box\n\nb = Box("})
    _, context = build(tmp_path, "pkg/main.py")
    [chunk] = context.chunks
    assert chunk.text == ('@dataclass\nclass Box:\n    """A box on the page."""\n    left: int\n'
                          "    top: int = 0\n    def area(self) -> float: ...")


def test_a_module_import_brings_the_definitions_named_near_the_cursor(tmp_path: Path) -> None:
    write(tmp_path, {"src/pkg/__init__.py": "", "src/pkg/shapes.py": SHAPES,
                     "src/pkg/main.py": "import pkg.shapes as sh\nfrom . import shapes\n\nx = sh.Box(1)\ny = "})
    _, context = build(tmp_path, "src/pkg/main.py")
    assert titles(context) == [("definition", "src/pkg/shapes.py", "class Box:")]


def test_what_lies_outside_the_workspace_or_does_not_exist_brings_nothing(tmp_path: Path) -> None:
    write(tmp_path, {"main.py": "import os\nfrom json import loads\nfrom .missing import thing\n"
                                "from pkg.nowhere import f\nimport nothing.here\n\nloads("})
    _, context = build(tmp_path, "main.py")
    assert context.chunks == () and context.header == ""


def test_an_open_document_wins_over_the_file_on_disk(tmp_path: Path) -> None:
    write(tmp_path, {"shapes.py": SHAPES, "main.py": "from shapes import scaled_box\n\nscaled_box("})
    builder = ContextBuilder(tmp_path, TOKENIZER)
    builder.saw(tmp_path / "shapes.py", "def scaled_box(width_in_cm):\n    pass\n")
    text = (tmp_path / "main.py").read_text()
    assert "width_in_cm" in builder.build(tmp_path / "main.py", text, len(text)).header
    builder.closed(tmp_path / "shapes.py")
    builder.saw(tmp_path / "main.py", text + "\n")  # an edit: the held set is checked against the files
    assert "corner_left" in builder.build(tmp_path / "main.py", text, len(text)).header


def test_excluded_files_are_never_read(tmp_path: Path) -> None:
    write(tmp_path, {"gen/shapes.py": SHAPES, "main.py": "from gen.shapes import scaled_box\n\nscaled_box("})
    _, context = build(tmp_path, "main.py", excludes=("gen/*",))
    assert context.chunks == ()


def test_the_budget_keeps_the_names_used_near_the_cursor_first(tmp_path: Path) -> None:
    write(tmp_path, {"shapes.py": SHAPES,
                     "main.py": "from shapes import Box, scaled_box, unrelated, LIMIT\n\nscaled_box("})
    _, everything = build(tmp_path, "main.py", budget=10_000)
    assert {c.title.split("(")[0] for c in everything.chunks} == {
        "class Box:", "def scaled_box", "def unrelated", "LIMIT = 40"}
    small = len(TOKENIZER.encode(format_chunks([c for c in everything.chunks if "scaled_box" in c.title], "#"),
                                 add_special_tokens=False))
    _, trimmed = build(tmp_path, "main.py", budget=small)
    assert [c.title.split("(")[0] for c in trimmed.chunks] == ["def scaled_box"]
    assert 0 < trimmed.tokens <= small
    _, none = build(tmp_path, "main.py", budget=small - 1)
    assert none.chunks == () or none.tokens <= small - 1


def test_the_same_chunks_give_the_same_header_whatever_order_they_come_in() -> None:
    chunks = [Chunk("b.py", "def b(): ...", "definition", 3), Chunk("a.py", "x = 1", "recent", 9),
              Chunk("b.py", "def a(): ...", "definition", 1), Chunk("c.py", "def c(): ...", "outline", 0)]
    header = format_chunks(chunks, "#")
    assert all(format_chunks(order, "#") == header for order in (chunks[::-1], chunks[1:] + chunks[:1]))
    assert header == ("# a.py\nx = 1\n\n# c.py\ndef c(): ...\n\n"
                      "# b.py\ndef a(): ...\n\ndef b(): ...\n\n")


def test_typing_within_a_block_keeps_the_chunk_set_and_its_tokens(tmp_path: Path) -> None:
    write(tmp_path, {"shapes.py": SHAPES})
    imports = "from shapes import Box, scaled_box\n\n"
    both = build(tmp_path, "main.py", imports + "b = Box(", budget=10_000)[1].chunks
    box_only = max(len(TOKENIZER.encode(format_chunks([chunk], "#"))) for chunk in both)  # one fits, not two
    builder = ContextBuilder(tmp_path, TOKENIZER, budget=box_only)
    first = builder.build(tmp_path / "main.py", imports + "b = Box(", len(imports) + 8)
    assert titles(first) == [("definition", "shapes.py", "class Box:")]
    typed = imports + "b = scaled_box("  # scaled_box is now the name near the cursor: it would rank first
    assert titles(ContextBuilder(tmp_path, TOKENIZER, budget=box_only).build(
        tmp_path / "main.py", typed, len(typed)))[0][2].startswith("def scaled_box(")
    assert builder.build(tmp_path / "main.py", typed, len(typed)) is first
    (tmp_path / "shapes.py").write_text(SHAPES.replace("left: int", "west: int"))
    changed = builder.build(tmp_path / "main.py", typed, len(typed))
    assert changed is not first and titles(changed)[0][2].startswith("def scaled_box(")


def test_the_outline_lists_what_the_window_cuts_off() -> None:
    far = "".join(f"def helper_{i}(value_{i}):\n    return value_{i}\n\n\n" for i in range(40))
    text = far + "def near_one(a):\n    return a\n\n\nresult = "
    [outline] = outline_beyond(text, len(text), "long.py", window_chars=120)
    assert outline.kind == "outline" and outline.path == "long.py" and outline.line == 0
    assert "def helper_0(value_0): ..." in outline.text and "near_one" not in outline.text
    assert outline_beyond(text, len(text), "long.py", window_chars=len(text)) == []


def test_the_ring_is_bounded_refreshes_a_place_and_ranks_by_shared_names() -> None:
    ring = RecentRing(size=3, lines=8)
    doc = "\n".join(f"value_{i} = compute_total(price_{i}, tax_rate)" for i in range(100))
    for line in (0, 1, 2, 3):  # one place: one chunk
        ring.add("a.py", doc, line)
    assert len(ring) == 1
    for line in (20, 40, 60, 80):
        ring.add("a.py", doc, line)
    assert len(ring) == 3  # the oldest went
    kept = ring.ranked(frozenset({"compute_total", "tax_rate"}))
    assert [any(f"value_{line} " in c.text for c in kept) for line in (20, 40, 60, 80)] == [False, True, True, True]
    assert ring.ranked(frozenset({"compute_total"}), exclude="a.py") == []
    assert ring.ranked(frozenset({"something_else"})) == []


def test_recent_chunks_of_other_files_come_into_the_header(tmp_path: Path) -> None:
    builder = ContextBuilder(tmp_path, TOKENIZER, budget=400)
    other = "def post_invoice(invoice_id, amount_due):\n    ledger.append(invoice_id, amount_due)\n"
    builder.saw(tmp_path / "billing.py", other, 0)
    text = "invoice_id = 4\namount_due = 3\nledger.append("
    context = builder.build(tmp_path / "main.py", text, len(text))
    assert titles(context) == [("recent", "billing.py", "def post_invoice(invoice_id, amount_due):")]


def test_repo_root_is_the_nearest_project_folder(tmp_path: Path) -> None:
    write(tmp_path, {"proj/pyproject.toml": "", "proj/src/pkg/mod.py": ""})
    (tmp_path / "proj" / ".git").mkdir()
    assert repo_root(tmp_path / "proj/src/pkg/mod.py") == (tmp_path / "proj").resolve()
    assert repo_root(tmp_path / "elsewhere.py") is None or repo_root(tmp_path / "elsewhere.py") != tmp_path
