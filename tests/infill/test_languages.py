"""Every language of the table, on a small real file of that language (tests/fixtures/langs): the rows name
node types the grammars have, a cursor mid-statement gets a line window, a function header a block window,
a generated block closes its own braces (or `end`) exactly when the text after it does not, hole markers
in the language's comments are filled, a result that breaks the parse is dropped, and a function query
finds the body. Cheap planning tests run per language; the engine tests use one-token checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import DenoiseParams, Engine
from infill import (
    LANGUAGES,
    FillOptions,
    Spot,
    apply_edits,
    fill,
    find_holes,
    language_for_path,
    plan_completion,
)
from infill.canvas import Slot
from infill.languages import PLAIN_TEXT, get_language, language_for_file, language_or_plain
from infill.postprocess import finish
from infill.query import function_body_query, spots_from_query
from infill.syntax import error_nodes
from infill.windows import LINE_TOKENS
from tests.support.checkpoints import make_one_token_checkpoint

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "langs"

# file, the start of a statement to cut the line after (a cursor mid-statement), a body line, a block closer
CASES = [
    ("sample.js", "const total = ", "return value;", "}"),
    ("sample.ts", "const total = ", "return value;", "}"),
    ("sample.tsx", "const text = ", "return null;", "}"),
    ("Sample.java", "int total = ", "return value;", "}"),
    ("sample.go", "total := ", "return value", "}"),
    ("sample.rs", "let total: f64 = ", "value", "}"),
    ("sample.c", "double total = ", "return value;", "}"),
    ("sample.cpp", "double total = ", "return value;", "}"),
    ("Sample.cs", "int total = ", "return value;", "}"),
    ("sample.rb", "total = ", "value", "end"),
    ("sample.php", "$total = ", "return $value;", "}"),
    ("sample.sh", "total=$((total + ", 'echo "$1"', "}"),
    ("sample.lua", "local total = ", "return value", "end"),
]
IDS = [case[0] for case in CASES]
BREAKING_TOKEN = {"bash": ";"}  # bash parses `@@@@` as a command word; `;;;;` is an error there


def read(name: str) -> tuple[str, object]:
    path = FIXTURES / name
    return path.read_text(), language_for_path(path)


def hole_header(lines: list[str], spec: object) -> int:
    """The index of the line that opens the body holding the hole marker (the function header, or its
    `{` line in Allman style)."""
    marker = next(i for i, line in enumerate(lines) if "<|hole|>" in line)
    return next(i for i in range(marker - 1, -1, -1) if spec.opens_block(lines[i]))


def offset_after(text: str, needle: str) -> int:
    return text.index(needle) + len(needle)


def test_every_fixture_parses_and_every_language_has_one() -> None:
    covered = {language_for_path(FIXTURES / name).id for name, *_ in CASES}
    assert covered == {spec.id for spec in LANGUAGES.values() if spec.has_grammar and not spec.line_only} - {"python"}
    for name, *_ in CASES:
        text, spec = read(name)
        assert not spec.parse(text).root_node.has_error, name


@pytest.mark.parametrize("spec", [s for s in LANGUAGES.values() if s.has_grammar], ids=lambda s: s.id)
def test_rows_name_node_types_their_grammar_has(spec: object) -> None:
    import tree_sitter

    language = spec.language
    for field in ("statements", "strings", "comments", "containers"):
        for kind in getattr(spec, field):
            assert language.id_for_node_kind(kind, True) is not None, f"{spec.id}.{field}: {kind}"
    if not spec.line_only:
        assert spec.function_patterns, spec.id
    for pattern in spec.function_patterns:
        tree_sitter.Query(language, f'({pattern} (#match? @name "x"))')
    if spec.scoping is not None:
        for field in ("names", "patterns", "functions", "blocks", "closed"):
            for kind in getattr(spec.scoping, field):
                assert language.id_for_node_kind(kind, True) is not None, f"{spec.id}.scoping.{field}: {kind}"
        tree_sitter.Query(language, spec.scoping.bindings)


@pytest.mark.parametrize(("name", "statement", "body", "closer"), CASES, ids=IDS)
def test_a_cursor_mid_statement_gets_a_line_and_a_complete_statement_nothing(
    name: str, statement: str, body: str, closer: str
) -> None:
    text, spec = read(name)
    cursor = offset_after(text, statement)
    line_end = text.index("\n", cursor)
    cut = text[:cursor] + text[line_end:]
    spot = plan_completion(cut, cursor, spec)
    assert spot is not None and (spot.kind, spot.n_masks) == ("line", LINE_TOKENS)
    assert plan_completion(text, line_end, spec) is None, "the whole statement is already there"
    assert plan_completion(text, cursor - 2, spec) is None or text[cursor - 2] == " "  # never inside a word


@pytest.mark.parametrize(("name", "statement", "body", "closer"), CASES, ids=IDS)
def test_a_function_header_gets_a_block(name: str, statement: str, body: str, closer: str) -> None:
    text, spec = read(name)
    lines = text.split("\n")
    header = hole_header(lines, spec)
    end = sum(len(line) + 1 for line in lines[:header]) + len(lines[header])
    spot = plan_completion(text, end, spec)
    assert spot is not None and spot.kind == "block" and spot.n_masks > LINE_TOKENS
    blank_below = text[: end + 1] + "\n" + text[end + 1 :]  # the editor user pressed Enter first
    below = plan_completion(blank_below, end + 1, spec)
    assert below is not None and below.kind == "block"


@pytest.mark.parametrize(("name", "statement", "body", "closer"), CASES, ids=IDS)
def test_a_block_closes_itself_only_where_the_text_after_it_does_not(
    name: str, statement: str, body: str, closer: str
) -> None:
    text, spec = read(name)
    lines = text.split("\n")
    header = hole_header(lines, spec)
    indent = lines[header][: len(lines[header]) - len(lines[header].lstrip())]
    inner = indent + ("\t" if "\t" in text else "  " if name.endswith((".rb", ".sh", ".lua", ".js", ".ts", ".tsx")) else "    ")
    end = sum(len(line) + 1 for line in lines[:header]) + len(lines[header])
    raw = f"\n{inner}{body}\n{indent}{closer}\n\n{indent}next_thing(1)\n"
    spot = Spot(end, end, 48, "block")
    unclosed = text[:end] + "\n"
    _, alone = finish(raw, Slot(spot, 0, 48), unclosed, spec)
    assert alone == f"\n{inner}{body}\n{indent}{closer}", "the block closes itself and stops there"
    closed, left_open = (spec.parse(unclosed[:end] + t + "\n") for t in (alone, f"\n{inner}{body}"))
    assert len(error_nodes(closed)) <= len(error_nodes(left_open))
    _, inside = finish(raw, Slot(spot, 0, 48), text, spec)
    assert inside == f"\n{inner}{body}", "the text after the spot already closes the block"


@pytest.fixture(scope="module")
def writes_x(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return Engine.load(str(make_one_token_checkpoint(tmp_path_factory.mktemp("x"), "x")), device="cpu")


@pytest.fixture(scope="module")
def breakers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Engine]:
    return {
        token: Engine.load(str(make_one_token_checkpoint(tmp_path_factory.mktemp("t"), token)), device="cpu")
        for token in ("@", ";")
    }


EXACT = FillOptions(retries=0, keep_invalid=True, max_grow=0)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "statement", "body", "closer"), CASES, ids=IDS)
def test_the_hole_marker_in_the_languages_comment_is_filled(
    writes_x: Engine, name: str, statement: str, body: str, closer: str
) -> None:
    text, spec = read(name)
    (hole,) = find_holes(text, spec)
    assert text[hole.start : hole.end] == f"{spec.comment_prefix} <|hole|>"
    assert find_holes(text.replace(spec.comment_prefix + " <|hole", "# x <|hole"), spec) == []
    result = fill(writes_x, text, [Spot(hole.start, hole.end, 4, "block")], DenoiseParams(), spec, options=EXACT)
    (edit,) = result.edits
    assert (edit.start, edit.end) == (hole.start, hole.end) and set(edit.new_text) == {"x"}
    filled = apply_edits(text, result.edits)
    assert filled == text[: hole.start] + edit.new_text + text[hole.end :]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "statement", "body", "closer"), CASES, ids=IDS)
def test_a_result_that_breaks_the_parse_is_dropped(
    breakers: dict[str, Engine], name: str, statement: str, body: str, closer: str
) -> None:
    text, spec = read(name)
    (hole,) = find_holes(text, spec)
    engine = breakers[BREAKING_TOKEN.get(spec.id, "@")]
    options = FillOptions(retries=0, max_grow=0)
    result = fill(engine, text, [Spot(hole.start, hole.end, 4, "block")], DenoiseParams(), spec, options=options)
    assert result.edits == []
    assert any("does not parse" in note for note in result.notes), result.notes


@pytest.mark.parametrize(("name", "statement", "body", "closer"), CASES, ids=IDS)
def test_a_function_query_finds_the_body_in_each_grammar(name: str, statement: str, body: str, closer: str) -> None:
    text, spec = read(name)
    (spot,) = spots_from_query(text, function_body_query(r"(^|\.)([Mm]ean|Greeting)$", spec), spec)
    assert "values" in text[spot.start : spot.end] or "$" in text[spot.start : spot.end]
    assert "{" not in text[spot.start : spot.start + 1] and "}" not in text[spot.end - 1 : spot.end]


@pytest.mark.parametrize(
    ("language", "text", "kind"),
    [
        ("json", '{\n  "name": "x",\n  "tags": [', "line"),
        ("json", '{\n  "name": ', "line"),
        ("yaml", "name: x\nservices:", "line"),
        ("toml", '[tool.x]\nname = "x"\nvalue = ', "line"),
    ],
)
def test_data_files_get_lines_only(language: str, text: str, kind: str) -> None:
    spot = plan_completion(text, len(text), language)
    assert spot is not None and spot.kind == kind


def test_names_editors_use_find_their_row_and_unknown_ones_are_plain_text() -> None:
    assert get_language("typescriptreact").id == "tsx"
    assert get_language("cs").id == get_language("csharp").id == "csharp"
    assert get_language("shellscript").id == get_language("sh").id == "bash"
    assert language_or_plain("markdown") is PLAIN_TEXT
    assert language_for_file("notes.txt") is PLAIN_TEXT and language_for_file("a.go").id == "go"
    assert language_for_file("a.txt", "lua").id == "lua"


def test_plain_text_completes_lines_without_a_parse_check(writes_x: Engine) -> None:
    text = "Shopping list:\n- apples\n- "
    spot = plan_completion(text, len(text), "markdown-has-no-row" and PLAIN_TEXT)
    assert spot is not None and spot.kind == "line"
    assert plan_completion("one word", 3, PLAIN_TEXT) is None
    result = fill(writes_x, text, [spot], DenoiseParams(), PLAIN_TEXT, options=EXACT)
    assert [e.new_text.strip("x") for e in result.edits] == [""]
    assert any("no parse check ran" in note for note in result.notes)
    assert find_holes("a\n# <|hole|>\nb\n", PLAIN_TEXT) == [Spot(2, 12, 64, "block")]


@pytest.mark.parametrize(("name", "statement", "body", "closer"), CASES, ids=IDS)
def test_a_block_inside_the_hole_keeps_its_own_closer(name: str, statement: str, body: str, closer: str) -> None:
    """The text after a hole starts with the function's closer; the result's inner block closing with the
    same line is not an echo of that text (it used to cut every brace-language hole after its first block)."""
    text, spec = read(name)
    (hole,) = find_holes(text, spec)
    indent = text[text.rfind("\n", 0, hole.start) + 1 : hole.start]
    opener = {"ruby": "if value > high", "lua": "if value > high then", "bash": "if [ $1 ]; then"}.get(spec.id, "if (value > high) {")
    inner_close = {"bash": "fi"}.get(spec.id, closer)
    raw = f"{opener}\n{indent}{indent or '  '}{body}\n{indent}{inner_close}\n{indent}{body}\n"
    _, new_text = finish(raw, Slot(hole, 0, 48), text, spec)
    assert new_text.split("\n")[-1].strip() == body.strip(), new_text
