"""Corpus v2 and the objective mix: licences, Debian's per-file copyright, npm's build output, multi-line
gaps at statement boundaries that differ from their surroundings, repository headers built by the product's
context builder, and next-edit windows."""

from __future__ import annotations

import io
import json
import random
import tarfile
from pathlib import Path

import numpy as np
import pytest

from tests.support.checkpoints import tiny_tokenizer
from training import debian_source, npm_source
from training.block_gaps import differs, statement_runs
from training.gaps import Corpus, tokenize
from training.headers import Headers, tree_path
from training.licences import permissive
from training.next_edit_examples import EditExample, edit_window
from training.objectives import Sampler, Shape, parse_mix, without_header
from training.run_folder import Special

SHAPES = '''"""Shapes."""


class Box:
    """A box with a width and a height."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height

    def area(self) -> int:
        return self.width * self.height
'''

MAIN = '''from .shapes import Box


def total(boxes):
    result = 0
    for box in boxes:
        if box.width > 0:
            result += box.area()
    return result


def biggest(boxes):
    best = None
    for box in boxes:
        if best is None or box.area() > best.area():
            best = box
    return best


def make(n):
    return [Box(i, i + 1) for i in range(n)]
'''


@pytest.mark.parametrize(("expression", "family"), [
    ("MIT", "MIT"), ("Expat", "MIT"), ("BSD-3-clause", "BSD"), ("Apache-2.0 or MIT", "Apache-2.0"),
    ("BSD-3-clause or GPL-2", "BSD"), ("Apache-2.0 WITH LLVM-exception", "Apache-2.0"), ("ISC", "ISC"),
    ("Zlib", "Zlib"), ("GPL-2+", None), ("LGPL-2.1 and MIT", None), ("public-domain", None), ("MPL-2.0", None),
    ("BSL-1.0", None), ("CC-BY-SA-4.0", None), ("", None),
])
def test_only_permissive_licences_pass(expression, family):
    assert permissive(expression) == family


def test_debian_copyright_decides_per_file():
    text = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: demo

Files: *
Copyright: 2020 Someone
License: MIT

Files: contrib/*
 src/gpl_part.c
Copyright: 2019 Other
License: GPL-2+

Files: debian/*
License: GPL-2+

License: MIT
 Permission is hereby granted...
"""
    paragraphs = debian_source.copyright_paragraphs(text)
    assert paragraphs is not None
    assert permissive(debian_source.licence_of("src/main.c", paragraphs) or "") == "MIT"
    assert permissive(debian_source.licence_of("src/gpl_part.c", paragraphs) or "") is None
    assert permissive(debian_source.licence_of("contrib/x/y.c", paragraphs) or "") is None
    assert debian_source.copyright_paragraphs("This package was debianized by ...") is None


def _tgz(path: Path, files: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_npm_keeps_sources_and_leaves_build_output_out(tmp_path):
    archive = _tgz(tmp_path / "demo-1.0.0.tgz", {
        "package/package.json": json.dumps({"name": "demo", "version": "1.0.0", "license": "(MIT OR Apache-2.0)"}),
        "package/lib/index.js": "export function add(a, b) {\n  return a + b;\n}\n",
        "package/src/types.ts": "export interface Point {\n  x: number;\n}\n",
        "package/dist/index.js": "export function add(a, b) { return a + b; }\n",
        "package/lib/index.d.ts": "export declare function add(a: number, b: number): number;\n",
        "package/lib/compiled.js": '"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });\n',
        "package/lib/add.test.js": "test('add', () => {});\n",
    })
    package = npm_source.read(archive)
    assert package.licence == "MIT" and package.version == "1.0.0"
    assert [(p, lang) for p, _, lang in package.files] == [("lib/index.js", "javascript"), ("src/types.ts", "typescript")]
    assert sum(package.skipped.values()) == 4


def test_multi_line_runs_start_and_end_whole_statements():
    from infill.languages import get_language

    runs = statement_runs(MAIN, get_language("python"))
    lines = MAIN.split("\n")
    assert runs and all(2 <= last - first + 1 <= 10 for first, last in runs)
    assert (5, 7) in runs  # the for loop of total(): three lines, a whole statement
    for first, last in runs:
        assert lines[first].strip() and lines[last].strip()
    js = "function f(a) {\n  const x = a + 1;\n  if (x > 2) {\n    return x;\n  }\n  return 0;\n}\n"
    assert (2, 4) in statement_runs(js, get_language("javascript"))


def test_a_run_that_the_lines_around_it_repeat_is_not_a_gap():
    lines = ["a = compute(1)", "b = compute(2)", "log(a, b)", "a = compute(1)", "b = compute(2)", "done()"]
    assert not differs(lines, 0, 1)  # the next lines say the same: copying would be right by accident
    assert differs(["x = 1", "total = sum(values)", "mean = total / len(values)", "print(mean)"], 1, 2)
    assert not differs(["x", "import os", "import sys", "y"], 1, 2)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A two-file package laid out as training.corpus lays the corpus out, and its corpus split."""
    folder = tmp_path_factory.mktemp("project")
    tokenizer = tiny_tokenizer()
    records = [{"package": "demo", "path": "demo/shapes.py", "language": "python", "text": SHAPES},
               {"package": "demo", "path": "demo/main.py", "language": "python", "text": MAIN}]
    for r in records:
        target = tree_path(folder / "trees", r["package"], r["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(r["text"])
    (folder / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder, Corpus(folder / "train.jsonl", tokenizer), tokenizer


def test_headers_are_the_context_builders_and_gaps_use_them(project):
    folder, corpus, tokenizer = project
    headers = Headers(corpus, folder / "trees", tokenizer, budget=200, max_length=512)
    header = headers.header(1, MAIN.index("result += box.area()"), random.Random(0))
    assert "# demo/shapes.py" in header and "class Box" in header and "def area(self) -> int" in header
    eos, mask = tokenizer.convert_tokens_to_ids("<|endoftext|>"), len(tokenizer)
    sampler = Sampler(corpus, Special(eos, mask), Shape(window=256, points=3), headers)
    rng = random.Random(3)
    examples = [e for e in (sampler.example("header", rng) for _ in range(20)) if e is not None]
    assert examples
    example = examples[0]
    h = example.header
    assert h > 0 and "# demo/" in tokenizer.decode(example.ids[1 : 1 + h].tolist())
    assert all(gap.a > h for gap in example.gaps)
    names = ("Box", "area", "width", "height")
    assert any(any(n in tokenizer.decode(e.ids[g.a : g.b].tolist()) for n in names) for e in examples for g in e.gaps)
    plain = without_header(example)
    assert len(plain.ids) == len(example.ids) - h
    for with_, without in zip(example.gaps, plain.gaps):
        assert np.array_equal(example.ids[with_.a : with_.b], plain.ids[without.a : without.b])


def test_next_edit_window_masks_the_region_under_the_history_header():
    tokenizer = tiny_tokenizer()
    current = "def f(values):\n    total = 0\n    for v in values:\n        total += v\n    return total\n"
    answer = "\n        total += v * 2"
    start = current.index("\n        total += v")
    end = start + len("\n        total += v")
    example = EditExample("demo", "demo.py", "1->2", "# Edit in demo.py:\n# -a = v\n# +a = v * 2\n\n", current,
                          ((start, end, answer),))
    ids, gaps, header = edit_window(example, tokenizer, 0, 200, random.Random(0))
    assert tokenizer.decode(ids[1 : 1 + header].tolist()) == example.header
    (gap,) = gaps
    assert tokenizer.decode(ids[gap.a : gap.b].tolist()) == answer
    assert tokenizer.decode(ids[1 + header : gap.a].tolist()) == current[:start]
    assert tokenizer.decode(gap.right.tolist()) == current[end:][: len(tokenizer.decode(gap.right.tolist()))]


def test_mix_shares_are_named_and_normalised():
    assert parse_mix("single=3,multi=1") == {"single": 0.75, "multi": 0.25}
    with pytest.raises(SystemExit, match="unknown name 'lines'"):
        parse_mix("lines=1")
    with pytest.raises(SystemExit, match="not all 0"):
        parse_mix("single=0")


def test_tokenized_files_mark_their_line_breaks():
    tf = tokenize(tiny_tokenizer(), MAIN)
    assert all(MAIN[tf.offsets[i]] == "\n" for i in tf.breaks)
