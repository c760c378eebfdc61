"""One level above parsing (infill.scope, repair.scope_check, settle): a regenerated range must not unbind
a name that it bound and the code after it reads. Every case's filled file parses, so what is refused is
refused for the name alone."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from infill.languages import LANGUAGES, get_language
from infill.parsing import first_error
from infill.repair import baseline, check_filled
from infill.settle import UNBOUND, note_reason, settle
from infill.spots import Edit, Spot


@dataclass(frozen=True)
class Case:
    """`text`: a file whose range `«...»` binds `width` and then `area` from it, and whose code after the
    range reads `area`; `drop`: lines that bind neither; `keep`: lines that bind `area` another way;
    `rename`: lines that call `width` `w` (nothing after reads `width`); `rebound`: the file with `area`
    bound again after the range before its read (None where the language refuses a second binding in one
    scope)."""

    text: str
    drop: str
    keep: str
    rename: str
    rebound: str | None


CASES: dict[str, Case] = {
    "python": Case(
        "def f(box):\n«    width = box[2] - box[0]\n    area = width * 2\n»    return area\n",
        "    if not box:\n        return 0\n",
        "    area = (box[2] - box[0]) * 2\n",
        "    w = box[2] - box[0]\n    area = w * 2\n",
        "def f(box):\n«    width = box[2] - box[0]\n    area = width * 2\n»    area = 0\n    return area\n",
    ),
    "javascript": Case(
        "function f(box) {\n«  const width = box[2] - box[0];\n  const area = width * 2;\n»  return area;\n}\n",
        "  if (!box) { return 0; }\n",
        "  const { area } = measure(box);\n",
        "  const w = box[2] - box[0];\n  const area = w * 2;\n",
        "function f(box) {\n«  var width = box[2] - box[0];\n  var area = width * 2;\n»  var area = 0;\n"
        "  return area;\n}\n",
    ),
    "typescript": Case(
        "function f(box: number[]): number {\n«  const width: number = box[2] - box[0];\n"
        "  const area: number = width * 2;\n»  return area;\n}\n",
        "  if (!box) { return 0; }\n",
        "  const [area] = [box[2] * 2];\n",
        "  const w: number = box[2] - box[0];\n  const area: number = w * 2;\n",
        None,
    ),
    "java": Case(
        "class A {\n  int f(int[] box) {\n«    int width = box[2] - box[0];\n    int area = width * 2;\n»"
        "    return area;\n  }\n}\n",
        "    if (box == null) { return 0; }\n",
        "    var area = (box[2] - box[0]) * 2;\n",
        "    int w = box[2] - box[0];\n    int area = w * 2;\n",
        None,
    ),
    "go": Case(
        "package main\n\nfunc f(box []int) int {\n«\twidth := box[2] - box[0]\n\tarea := width * 2\n»\treturn area\n}\n",
        "\tif box == nil {\n\t\treturn 0\n\t}\n",
        "\tvar area = (box[2] - box[0]) * 2\n",
        "\tw := box[2] - box[0]\n\tarea := w * 2\n",
        "package main\n\nfunc f(box []int) int {\n«\twidth := box[2] - box[0]\n\tarea := width * 2\n»"
        "\tarea, ok := 0, true\n\t_ = ok\n\treturn area\n}\n",
    ),
    "rust": Case(
        "fn f(b: &[i32]) -> i32 {\n«    let width = b[2] - b[0];\n    let area = width * 2;\n»    area\n}\n",
        "    if b.is_empty() { return 0; }\n",
        "    let (area, _) = (b[2] * 2, 0);\n",
        "    let w = b[2] - b[0];\n    let area = w * 2;\n",
        "fn f(b: &[i32]) -> i32 {\n«    let width = b[2] - b[0];\n    let area = width * 2;\n»    let area = 0;\n"
        "    area\n}\n",
    ),
    "c": Case(
        "int f(int *box) {\n«    int width = box[2] - box[0];\n    int area = width * 2;\n»    return area;\n}\n",
        "    if (!box) { return 0; }\n",
        "    int *p = box, area = (p[2] - p[0]) * 2;\n",
        "    int w = box[2] - box[0];\n    int area = w * 2;\n",
        "int f(int *box) {\n«    int width = box[2] - box[0];\n    int area = width * 2;\n»"
        "    { int area = 0; return area; }\n}\n",
    ),
    "cpp": Case(
        "int f(const std::vector<int>& box) {\n«    auto width = box[2] - box[0];\n    auto area = width * 2;\n»"
        "    return area;\n}\n",
        "    if (box.empty()) { return 0; }\n",
        "    auto [area, rest] = split(box);\n",
        "    auto w = box[2] - box[0];\n    auto area = w * 2;\n",
        "int f(const std::vector<int>& box) {\n«    auto width = box[2] - box[0];\n    auto area = width * 2;\n»"
        "    for (auto& area : box) { return area; }\n    return 0;\n}\n",
    ),
    "csharp": Case(
        "class A {\n  int F(int[] box) {\n«    var width = box[2] - box[0];\n    var area = width * 2;\n»"
        "    return area;\n  }\n}\n",
        "    if (box == null) { return 0; }\n",
        "    var (area, rest) = Split(box);\n",
        "    var w = box[2] - box[0];\n    var area = w * 2;\n",
        None,
    ),
    "ruby": Case(
        "def f(box)\n«  width = box[2] - box[0]\n  area = width * 2\n»  area\nend\n",
        "  return 0 if box.empty?\n",
        "  area, rest = split(box)\n",
        "  w = box[2] - box[0]\n  area = w * 2\n",
        "def f(box)\n«  width = box[2] - box[0]\n  area = width * 2\n»  area = 0\n  area\nend\n",
    ),
    "php": Case(
        "<?php\nfunction f($box) {\n«  $width = $box[2] - $box[0];\n  $area = $width * 2;\n»  return $area;\n}\n",
        "  if (!$box) { return 0; }\n",
        "  [$area, $rest] = split($box);\n",
        "  $w = $box[2] - $box[0];\n  $area = $w * 2;\n",
        "<?php\nfunction f($box) {\n«  $width = $box[2] - $box[0];\n  $area = $width * 2;\n»  $area = 0;\n"
        "  return $area;\n}\n",
    ),
    "bash": Case(
        '«width=$(( $2 - $1 ))\narea=$(( width * 2 ))\n»echo "$area"\n',
        '[ -n "$1" ] || exit 0\n',
        "for area in $(( ($2 - $1) * 2 )); do :; done\n",
        "w=$(( $2 - $1 ))\narea=$(( w * 2 ))\n",
        '«width=$(( $2 - $1 ))\narea=$(( width * 2 ))\n»area=0\necho "$area"\n',
    ),
    "lua": Case(
        "local function f(box)\n«  local width = box[3] - box[1]\n  local area = width * 2\n»  return area\nend\n",
        "  if not box then return 0 end\n",
        "  local area, rest = split(box)\n",
        "  local w = box[3] - box[1]\n  local area = w * 2\n",
        "local function f(box)\n«  local width = box[3] - box[1]\n  local area = width * 2\n»  local area = 0\n"
        "  return area\nend\n",
    ),
}


def judged(language: str, marked: str, new_text: str) -> tuple[Edit | None, list[str]]:
    """The fill of the marked range with `new_text` after `settle`, and its notes; the filled file parses."""
    spec = get_language(language)
    start = marked.index("«")
    end = marked.index("»") - 1
    text = marked.replace("«", "").replace("»", "")
    spot = Spot(start, end, 16, "block")
    edit = Edit(start, end, new_text, ())
    assert first_error(text, spec) is None, language
    assert first_error(text[:start] + new_text + text[end:], spec) is None, (language, new_text)
    (kept,), notes = settle(text, [edit], baseline(text, spec, [spot]), spec)
    return kept, notes


def test_every_language_with_a_grammar_but_the_data_files_has_scoping_rules() -> None:
    without = sorted(spec.id for spec in LANGUAGES.values() if spec.scoping is None)
    assert without == ["json", "plaintext", "toml", "yaml"]
    assert set(CASES) | {"tsx"} == {spec.id for spec in LANGUAGES.values() if spec.scoping is not None}


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_fill_that_drops_a_name_read_below_is_refused(language: str) -> None:
    case = CASES[language]
    kept, notes = judged(language, case.text, case.drop)
    name = "$area" if language == "php" else "area"
    line = case.text.replace("«", "").index("area", case.text.index("»") - 1)
    read_line = case.text.replace("«", "").count("\n", 0, line) + 1
    assert kept is None
    assert notes == [f"line {case.text.count(chr(10), 0, case.text.index('«')) + 1}: dropped, the result no "
                     f"longer defines {name}, which line {read_line} reads"], language
    assert note_reason(notes[0]) == UNBOUND


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_fill_that_binds_the_name_another_way_is_kept(language: str) -> None:
    kept, notes = judged(language, CASES[language].text, CASES[language].keep)
    assert kept is not None and notes == [], language


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_name_nothing_after_the_range_reads_may_be_renamed(language: str) -> None:
    kept, notes = judged(language, CASES[language].text, CASES[language].rename)
    assert kept is not None and notes == [], language


@pytest.mark.parametrize("language", sorted(k for k, case in CASES.items() if case.rebound is not None))
def test_a_name_bound_again_after_the_range_is_not_required(language: str) -> None:
    rebound = CASES[language].rebound
    assert rebound is not None
    kept, notes = judged(language, rebound, CASES[language].drop)
    assert kept is not None and notes == [], language


# The shape of the user's report (npm's install completion, written anew here): two regenerated lines that
# bound the names the rest of the function reads came back as an early return.
COMPLETE = """const completion = async (opts) => {
  const { partialWord } = opts
  const lastSlashIdx = partialWord.lastIndexOf('/')
«  const partialName = partialWord.slice(lastSlashIdx + 1)
  const partialPath = partialWord.slice(0, lastSlashIdx)
»  if (partialPath === '') {
    return []
  }
  const annotated = await readdir(partialPath)
  return annotated.filter(name => name.startsWith(partialName))
}
"""


def test_the_early_return_that_replaced_two_bindings_is_dropped_with_a_note_naming_the_name() -> None:
    kept, notes = judged("javascript", COMPLETE, "  if (lastSlashIdx === -1) {\n    return []\n  }\n")
    assert kept is None
    assert notes == ["line 4: dropped, the result no longer defines partialPath, which line 6 reads"]


@pytest.mark.parametrize("new_text", [
    "  const partialName = partialWord.slice(lastSlashIdx + 1)\n  const partialPath = partialWord.slice(0, lastSlashIdx) || '.'\n",
    "  const [partialPath, partialName] = split(partialWord, lastSlashIdx)\n",
    "  let partialName, partialPath\n  ;[partialPath, partialName] = split(partialWord)\n",
])
def test_the_same_names_bound_any_way_are_kept(new_text: str) -> None:
    kept, notes = judged("javascript", COMPLETE, new_text)
    assert kept is not None and notes == []


def test_a_binding_inside_a_nested_block_or_a_function_binds_nothing_after_it() -> None:
    for new_text in ("  if (partialWord) {\n    const partialName = 1, partialPath = 2\n  }\n",
                     "  const split = () => { const partialName = 1; const partialPath = 2 }\n"):
        kept, notes = judged("javascript", COMPLETE, new_text)
        assert kept is None and "no longer defines partialPath" in notes[0], new_text


NOT_REQUIRED = {
    "bound before the range": ("python", "def f(items):\n    total = 0\n«    total = sum(items)\n»    return total\n",
                               "    print(items)\n"),
    "a javascript function declared later is hoisted": (
        "javascript", "function main() {\n«  const run = () => 1;\n»  run();\n  function run() { return 2; }\n}\n",
        "  const other = 1;\n"),
    "python attributes and keyword arguments": (
        "python", "def f(obj):\n«    size = 1\n»    obj.size = 2\n    return g(size=3)\n", "    pass\n"),
    "javascript properties": (
        "javascript", "function f(o) {\n«  const size = 1;\n»  o.size = 2;\n  return { size: 3 };\n}\n", "  g();\n"),
    "a ruby method sees no variable around it (`size` there is a method call)": (
        "ruby", "«size = 1\n»def f\n  size\nend\n", "puts 1\n"),
    "a php function sees no variable around it": (
        "php", "<?php\n«$size = 1;\n»function f() { return $size; }\n", "echo 1;\n"),
}


@pytest.mark.parametrize("why", sorted(NOT_REQUIRED))
def test_reads_that_do_not_resolve_to_the_range_are_not_required(why: str) -> None:
    language, text, new_text = NOT_REQUIRED[why]
    kept, notes = judged(language, text, new_text)
    assert kept is not None and notes == [], why


def test_a_python_local_bound_again_further_down_is_unbound_where_the_range_bound_it() -> None:
    """A later assignment makes the name local to the whole function: the read between would raise
    UnboundLocalError, so the later binding does not serve it."""
    text = "def f(xs):\n«    total = 0\n»    for x in xs:\n        total += x\n    total = total * 2\n    return total\n"
    kept, notes = judged("python", text, "    pass\n")
    assert kept is None and notes == ["line 2: dropped, the result no longer defines total, which line 4 reads"]


def test_the_check_blames_the_end_of_the_edit_and_counts_one_error_per_edit() -> None:
    spec = get_language("python")
    text = "a = 1\nb = 2\nprint(a, b)\n"
    spots = [Spot(0, 6, 4, "line"), Spot(6, 12, 4, "line")]
    edits: list[Edit | None] = [Edit(0, 6, "x = 1\n", ()), Edit(6, 12, "y = 2\n", ())]
    check = check_filled(text, edits, baseline(text, spec, spots), spec)
    assert check.added == 2 and check.where == (6, 6)
    assert [u.name if u else None for u in check.unbound] == ["a", "b"]
    kept, notes = settle(text, edits, baseline(text, spec, spots), spec)
    assert kept == [None, None] and len(notes) == 2
    one = check_filled(text, [edits[0], None], baseline(text, spec, spots), spec)
    assert one.added == 1 and one.unbound[1] is None  # the second range keeps its own text


def test_no_check_without_a_range_or_for_a_file_whose_tree_has_an_error() -> None:
    spec = get_language("python")
    text = "a = 1\nprint(a)\n"
    assert baseline(text, spec, [Spot(0, 0, 4, "line")]).reads == ()
    broken = "a = 1\nprint(a\n"
    assert baseline(broken, spec, [Spot(0, 6, 4, "line")]).reads == ()
    assert baseline(text, get_language("json"), [Spot(0, 6, 4, "line")]).reads == ()
