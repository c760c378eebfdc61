"""The adapter trainer: gaps cut at the boundaries infill uses, the packed forward equal to the engine's,
and a run that trains, resumes and exports a model folder the engine loads."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from engine import DenoiseParams, Engine, InfillRequest
from engine.models.anchored import forward_canvas
from tests.support.checkpoints import write_tiny_gguf
from training.gaps import Corpus, Gap, Window, sample_gaps
from training.packed import build_rows, packed_logits

SAMPLE = '''import os


class Greeter:
    """Say hello."""

    def __init__(self, name: str) -> None:
        self.name = name

    def greet(self, times: int = 1) -> list[str]:
        out = []
        for index in range(times):
            if index % 2:
                out.append(f"hello {self.name}")
            else:
                out.append("hi " + self.name)
        return out


def main() -> None:
    greeter = Greeter(os.environ.get("USER", "world"))
    print(greeter.greet(3))
'''


@pytest.fixture(scope="module")
def engine(tiny_anchored) -> Engine:
    return Engine.load(tiny_anchored, device="cpu")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, engine) -> Corpus:
    folder = tmp_path_factory.mktemp("corpus")
    names = ("Greeter", "Host", "Caller", "Speaker", "Waiter", "Porter")
    for split, chosen in (("train", names[:4]), ("val", names[4:])):
        with (folder / f"{split}.jsonl").open("w") as f:
            for name in chosen:
                f.write(json.dumps({"package": "sample", "path": f"{name}.py", "text": SAMPLE.replace("Greeter", name)}) + "\n")
    return Corpus(folder / "train.jsonl", engine.tokenizer)


def test_gaps_start_and_end_where_infill_cuts(corpus):
    rng = random.Random(0)
    tf = corpus.file(0)
    window = Window(0, 0, len(tf.ids))
    gaps = [g for _ in range(20) for g in sample_gaps(corpus, window, rng, 4)]
    kinds = {g.kind for g in gaps}
    assert {"lines", "rest_of_line", "node"} <= kinds
    ids = np.concatenate([[0], tf.ids])
    text = corpus.texts[0]
    for gap in gaps:
        start, end = tf.offsets[gap.a - 1], tf.offsets[gap.b - 1] if gap.b - 1 < len(tf.ids) else len(text)
        assert corpus.tokenizer.decode(ids[gap.a : gap.b].tolist()) == text[start:end]
        if gap.kind in ("lines", "rest_of_line"):
            assert text[end] == "\n"  # the right context starts with the line break
        if gap.kind == "lines":
            assert text[start] == "\n"  # the prefix stops before its last line break
        assert np.array_equal(gap.right, tf.ids[gap.b - 1 : gap.b - 1 + len(gap.right)])


def test_packed_rows_equal_the_engine_forward_on_literal_canvases(engine):
    """The training layout (prefix and right context cached without gradients, all gaps' rows in one pass)
    gives the logits the engine's forward gives on each gap's own canvas."""
    model = engine.loaded.model
    mask, eos = engine.special.mask_id, engine.special.eos_id
    rng = np.random.RandomState(0)
    window = rng.randint(3, 500, 60)
    window[0] = eos
    gaps = [Gap(20, 27, rng.randint(3, 500, 9), "lines"), Gap(40, 44, rng.randint(3, 500, 0), "span")]
    rows = build_rows(window, gaps, mask, eos, 2, 3, random.Random(1))
    with torch.no_grad():
        packed = packed_logits(model, window, gaps, rows, eos)
    for r in range(len(rows.ids)):
        gap = gaps[rows.gap[r]]
        middle = list(window[gap.a : gap.b])
        k = len(middle) if rows.block[r] == 0 else rows.block_k[r]
        canvas = list(window[: gap.a]) + middle[:k] + [mask] * (len(middle) - k) + list(gap.right) + [eos]
        with torch.no_grad():
            literal = forward_canvas(model, canvas, [(gap.a, gap.b)])
        assert torch.allclose(literal[gap.a + rows.offset[r]], packed[r], atol=1e-4), r


def test_training_runs_resumes_and_exports_a_model_the_engine_loads(corpus, tmp_path, monkeypatch):
    from training.train_adapter import main

    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path / "cache"))
    base = tmp_path / "base.gguf"
    write_tiny_gguf(base)
    corpus_dir = tmp_path / "corpus"
    corpus_dir.mkdir()
    for split in ("train", "val"):
        (corpus_dir / f"{split}.jsonl").write_text(json.dumps({"package": "s", "path": "a.py", "text": SAMPLE}) + "\n")
    run = tmp_path / "run"
    common = ["--out", str(run), "--base", str(base), "--corpus", str(corpus_dir), "--window", "128",
              "--points", "2", "--eval-gaps", "4", "--rank", "4"]
    main(common + ["--minutes", "0.05"])
    first = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    step = torch.load(run / "state.pt", weights_only=False)["step"]
    assert step >= 1 and any(e["kind"] == "val" for e in first)
    main(common + ["--minutes", "0.1", "--resume"])
    assert torch.load(run / "state.pt", weights_only=False)["step"] > step
    main(common + ["--export", str(tmp_path / "model")])
    engine = Engine.load(tmp_path / "model", device="cpu")
    sp, tok = engine.special, engine.tokenizer
    canvas = [sp.bos_id] + tok.encode("def f(x):\n    return") + [sp.mask_id] * 4 + tok.encode("\n") + [sp.eos_id]
    assert len(engine.infill([InfillRequest(canvas)], DenoiseParams())[0].spans[0].token_ids) == 4
