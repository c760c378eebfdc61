"""The language server's project context (`lsp_server.repo_context`) on real files and a real tokenizer: which
project a document belongs to, open documents over files on disk, edits in other documents as recent code,
and builders made again for a new budget keeping what they had heard."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from infill.context.builder import usable_budget
from infill.languages import get_language
from lsp_server.repo_context import WorkspaceContext
from lsp_server.settings import Settings
from tests.support.checkpoints import tiny_tokenizer

PYTHON = get_language("python")
MAIN = "from shapes import scaled_box\n\nbox = scaled_box("


def engine() -> SimpleNamespace:
    """What the context reads of an engine: its tokenizer and its context length."""
    return SimpleNamespace(tokenizer=tiny_tokenizer(), max_length=1024)


def header(context: WorkspaceContext, uri: str, text: str, settings: Settings | None = None,
           model: SimpleNamespace | None = None) -> str:
    source = context.source(settings or Settings(), uri, text, PYTHON)
    assert source is not None
    return source(model or engine(), len(text))


def test_an_open_document_speaks_for_its_file_until_it_is_closed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "shapes.py").write_text("def scaled_box(left, top):\n    ...\n")
    context = WorkspaceContext(lambda: [project.as_uri()])
    main, shapes = (project / "main.py").as_uri(), (project / "shapes.py").as_uri()
    model = engine()
    assert "def scaled_box(left, top):" in header(context, main, MAIN, model=model)
    context.saw(shapes, "def scaled_box(corner_left, corner_top):\n    ...\n")
    assert "def scaled_box(corner_left, corner_top):" in header(context, main, MAIN, model=model)
    context.closed(shapes)
    assert "def scaled_box(left, top):" in header(context, main, MAIN, model=model)
    assert context.source(Settings(context=False), main, MAIN, PYTHON) is None
    assert context.source(Settings(context_tokens=0), main, MAIN, PYTHON) is None


def test_a_document_outside_every_folder_belongs_to_its_own_project(tmp_path: Path) -> None:
    folder, elsewhere = tmp_path / "folder", tmp_path / "elsewhere"
    for path in (folder, elsewhere / "pkg"):
        path.mkdir(parents=True)
    (elsewhere / "pyproject.toml").write_text("[project]\nname = 'elsewhere'\n")
    (elsewhere / "shapes.py").write_text("def scaled_box(corner_left, corner_top):\n    ...\n")
    context = WorkspaceContext(lambda: [folder.as_uri()])
    assert context.root_of(folder / "a.py") == folder
    assert context.root_of(elsewhere / "pkg" / "main.py") == elsewhere
    assert "corner_top" in header(context, (elsewhere / "main.py").as_uri(), MAIN)


def test_edits_in_other_documents_are_recent_code_and_outlive_a_new_budget(tmp_path: Path) -> None:
    context = WorkspaceContext(lambda: [tmp_path.as_uri()])
    colours = "def blend_colours(warm_tone, cool_tone):\n    return mix(warm_tone, cool_tone)\n"
    context.saw((tmp_path / "colours.py").as_uri(), colours, line=1)
    text = "tone = blend_colours(warm_tone, "
    main = (tmp_path / "main.py").as_uri()
    model = engine()
    assert "# colours.py\n" + colours.rstrip() in header(context, main, text, model=model)
    smaller = Settings(context_tokens=128)
    assert "# colours.py\n" in header(context, main, text, smaller, model)  # new builders, the same ring
    assert "colours.py" not in header(context, main, "print(1)\n", smaller, model)  # nothing in common


def test_the_budget_leaves_the_document_half_the_model_s_context() -> None:
    assert usable_budget(256, 1024) == 256 and usable_budget(4096, 1024) == 512 and usable_budget(-1, 1024) == 0
