"""The adapter trainer: gaps cut at the boundaries infill uses, the packed forward (its own attention,
training.row_attention) equal to the engine's literal forward in float32, values and gradients, and a run
that trains, survives a pause, resumes (in full and from its compact state) and exports a model folder the
engine loads."""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest
import torch

from engine import DenoiseParams, Engine, InfillRequest
from engine.models.anchored import forward_canvas
from tests.support.checkpoints import write_tiny_gguf
from training.gaps import Corpus, Gap, Window, sample_gaps
from training.packed import Rows, build_rows, loss_of, packed_logits

TOLERANCE = 1e-4
"""Largest difference allowed between a packed row's float32 logits (or the adapter's gradients) and the
engine's literal forward on that row's canvas: the two sum the same terms in another order (measured about
1e-6 on the tiny model)."""

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


@pytest.fixture(scope="module")
def training_model(tiny_anchored, engine):
    """The tiny anchored model as training builds it: unfused, the adapter applied by `Adapt.project`."""
    from engine.families.anchored_load import build_anchored
    from engine.models.anchored import AdapterShape

    shape = AdapterShape(rank=4, alpha=8.0, gap_room=16, max_right=64)
    model, _ = build_anchored(str(tiny_anchored / "base.gguf"), shape, torch.device("cpu"), torch.float32,
                              tiny_anchored / "adapter.safetensors")
    return model


def _literal_case(engine, model):
    mask, eos = engine.special.mask_id, engine.special.eos_id
    rng = np.random.RandomState(0)
    window = rng.randint(3, 500, 60)
    window[0] = eos
    right = rng.randint(3, 500, 9)
    gaps = [Gap(20, 27, right, "lines"), Gap(24, 27, right, "rest_of_line", at_end=True),
            Gap(40, 44, rng.randint(3, 500, 0), "span")]
    rows = build_rows(window, gaps, mask, eos, 2, 3, random.Random(1))
    return model, window, gaps, rows, mask, eos


def _literal_logits(model, window, gaps, rows, mask, eos, r):
    gap = gaps[rows.gap[r]]
    middle = list(window[gap.a : gap.b])
    k = len(middle) if rows.block[r] == 0 else rows.block_k[r]
    canvas = list(window[: gap.a]) + middle[:k] + [mask] * (len(middle) - k) + list(gap.right) + [eos]
    return forward_canvas(model, canvas, [(gap.a, gap.b)])[gap.a + rows.offset[r]]


def test_packed_rows_equal_the_engine_forward_on_literal_canvases(engine, training_model):
    """The training layout (prefix and right context once without gradients, each gap's rows attending to
    their own keys) gives the logits the engine's forward gives on each gap's own canvas."""
    model, window, gaps, rows, mask, eos = _literal_case(engine, training_model)
    with torch.no_grad():
        packed = packed_logits(model, window, gaps, rows, eos)
        worst = max(float((_literal_logits(model, window, gaps, rows, mask, eos, r) - packed[r]).abs().max())
                    for r in range(len(rows.ids)))
    assert worst <= TOLERANCE


def test_packed_gradients_equal_the_literal_forward(engine, training_model):
    """The adapter's gradients through the packed forward (the right bias rides in an extra query/key
    column there) equal those of the literal forward, in float32."""
    model, window, gaps, rows, mask, eos = _literal_case(engine, training_model)
    adapter = model.adapter
    saved = {k: v.clone() for k, v in adapter.state_dict().items()}
    torch.manual_seed(0)
    with torch.no_grad():
        for p in adapter.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    watched = [adapter.right_bias, adapter.lora(1, "q_proj").B, adapter.lora(0, "down_proj").A, adapter.mask_embed]
    for p in adapter.parameters():
        p.requires_grad_(True)
    try:
        loss, _ = loss_of(packed_logits(model, window, gaps, rows, eos), rows)
        packed = torch.autograd.grad(loss, watched)
        targets = torch.tensor(rows.targets)
        literal_loss = sum(torch.nn.functional.cross_entropy(
            _literal_logits(model, window, gaps, rows, mask, eos, r)[None].float(), targets[r : r + 1])
            for r in range(len(rows.ids))) / len(rows.ids)
        literal = torch.autograd.grad(literal_loss, watched)
    finally:
        for p in adapter.parameters():
            p.requires_grad_(False)
        adapter.load_state_dict(saved)
    for a, b in zip(packed, literal):
        assert float(b.abs().max()) > 0
        assert torch.allclose(a, b, atol=TOLERANCE, rtol=1e-3)


def test_mask_blocks_of_an_end_gap_reach_end_of_text(engine, training_model):
    model, window, gaps, rows, mask, eos = _literal_case(engine, training_model)
    blocks = {(g, b) for g, b in zip(rows.gap, rows.block) if gaps[g].at_end and b}
    assert blocks
    for g, block in blocks:
        last = max(i for i in range(len(rows.ids)) if rows.gap[i] == g and rows.block[i] == block)
        assert rows.targets[last] == eos


def _tiny_run(tmp_path, monkeypatch):
    monkeypatch.setenv("DCOMPLETE_CACHE", str(tmp_path / "cache"))
    base = tmp_path / "base.gguf"
    write_tiny_gguf(base)
    corpus_dir = tmp_path / "corpus"
    corpus_dir.mkdir()
    for split in ("train", "val"):
        (corpus_dir / f"{split}.jsonl").write_text(json.dumps({"package": "s", "path": "a.py", "text": SAMPLE}) + "\n")
    run = tmp_path / "run"
    common = ["--out", str(run), "--base", str(base), "--corpus", str(corpus_dir), "--window", "128",
              "--points", "2", "--eval-windows", "2", "--rank", "4", "--trees", str(tmp_path / "no-trees"),
              "--edits", str(tmp_path / "no-edits"), "--mix", "single=1,multi=1,end=1", "--eval-every", "3",
              "--ckpt-every", "2"]
    return run, common


def _log(run):
    return [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]


def test_training_runs_resumes_and_exports_a_model_the_engine_loads(tmp_path, monkeypatch):
    from training.train_adapter import main

    run, common = _tiny_run(tmp_path, monkeypatch)
    main(common + ["--steps", "4", "--minutes", "10"])
    state = torch.load(run / "state.pt", weights_only=False)
    assert state["counters"]["step"] == 4 and state["counters"]["windows"] == 8
    assert {e["kind"] for e in _log(run)} == {"val"} and (run / "best.pt").exists()
    main(common + ["--steps", "6", "--minutes", "10", "--resume"])
    assert torch.load(run / "state.pt", weights_only=False)["counters"]["step"] == 6
    main(common + ["--export", str(tmp_path / "model")])
    engine = Engine.load(tmp_path / "model", device="cpu")
    sp, tok = engine.special, engine.tokenizer
    canvas = [sp.bos_id] + tok.encode("def f(x):\n    return") + [sp.mask_id] * 4 + tok.encode("\n") + [sp.eos_id]
    assert len(engine.infill([InfillRequest(canvas)], DenoiseParams())[0].spans[0].token_ids) == 4


def test_a_later_session_resumes_from_the_compact_state(tmp_path, monkeypatch):
    """compact/ (float16 adapter, counters, the sampler's RNG) carries the run on in a fresh folder, as a
    later session does after the machine and its run folders are gone: the step count goes on, the adapter
    starts where it was (to float16), the optimizer is restarted warm."""
    import shutil

    from safetensors.torch import load_file

    from training.train_adapter import main

    run, common = _tiny_run(tmp_path, monkeypatch)
    main(common + ["--steps", "4", "--minutes", "10"])
    kept = tmp_path / "kept"
    shutil.copytree(run / "compact", kept)
    shutil.rmtree(run)
    saved = json.loads((kept / "state.json").read_text())
    assert saved["counters"]["step"] == 4 and {"log.jsonl", "adapter.safetensors"} <= {p.name for p in kept.iterdir()}
    adapter = load_file(str(kept / "adapter.safetensors"))
    main(common + ["--steps", "6", "--minutes", "10", "--resume-from", str(kept), "--eval-every", "100"])
    state = torch.load(run / "state.pt", weights_only=False)
    assert state["counters"]["step"] == 6 and state["counters"]["restart"] == 4
    assert state["counters"]["windows"] == 12
    assert not torch.equal(state["adapter"]["mask_embed"], adapter["mask_embed"].float())  # it trained on


def test_the_schedule_follows_steps_through_a_pause(tmp_path, monkeypatch):
    """SIGSTOP/SIGCONT in the middle of a run changes neither its learning rates (a function of the step)
    nor its training budget (CPU time): it runs all its steps."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from training.train_adapter import lr_factor, parse_args

    run, common = _tiny_run(tmp_path, monkeypatch)
    args = common + ["--steps", "20", "--minutes", "10", "--warmup", "5"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "DCOMPLETE_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "training.train_adapter", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 300
        while not (run / "log.jsonl").exists() or len(_log(run)) < 2:  # the step-0 evaluation and step 10
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.time() < deadline
            time.sleep(0.2)
        proc.send_signal(signal.SIGSTOP)
        time.sleep(3)
        proc.send_signal(signal.SIGCONT)
        assert proc.wait(timeout=300) == 0
    finally:
        proc.kill()
    train = [e for e in _log(run) if e["kind"] == "train"]
    parsed = parse_args(args)
    assert [e["step"] for e in train] == [10, 20]
    for e in train:
        assert e["lr"] == pytest.approx(parsed.lr * lr_factor(parsed, e["step"] - 1, None), abs=1e-7)
    assert train[-1]["wall"] - train[-1]["cpu"] >= 2.5  # the pause shows in wall time only


def _saved_for_backward(model, window, gaps, rows, eos) -> tuple[int, int]:
    """Bytes of the activations autograd keeps for the backward of one window's loss (the model's own
    weights left out), in all and the largest single one."""
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    kept: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in weights:
            kept[storage.data_ptr()] = storage.nbytes()
        return t

    adapter = model.adapter
    for p in adapter.parameters():
        p.requires_grad_(True)
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss, _ = loss_of(packed_logits(model, window, gaps, rows, eos), rows)
        loss.backward()
    finally:
        for p in adapter.parameters():
            p.requires_grad_(False)
            p.grad = None
    return sum(kept.values()), max(kept.values())


def test_a_windows_training_memory_grows_with_its_rows_not_rows_times_keys(engine, training_model):
    """Twice the gaps (the same gaps again, so exactly twice the rows) keep at most about twice the
    activations for the backward, and no kept tensor is as large as a score matrix of every row over every
    key. The engine's decoding attention, which training used before, attends each row over the whole
    window, all right contexts and all rows: its kept scores grow with rows x keys (8 GB for one 512-token
    window of the bundled model)."""
    model = training_model
    mask, eos = engine.special.mask_id, engine.special.eos_id
    rng = np.random.RandomState(2)
    window = rng.randint(3, 500, 240)
    window[0] = eos
    gaps = []
    for start in range(20, 230, 18):
        right = rng.randint(3, 500, int(rng.randint(4, 40)))
        gaps += [Gap(start, start + 8, right, "lines"), Gap(start + 4, start + 8, right, "rest_of_line")]
    once = build_rows(window, gaps, mask, eos, 2, 7, random.Random(0))
    again = Rows(*(getattr(once, f.name) * 2 for f in dataclasses.fields(Rows)))
    again.gap = once.gap + [g + len(gaps) for g in once.gap]
    measured = []
    for chosen, rows in ((gaps, once), (gaps + gaps, again)):
        total, largest = _saved_for_backward(model, window, chosen, rows, eos)
        keys = len(window) + sum(len(g.right) + 1 for g in chosen) + len(rows.ids)
        heads = model.shape.num_attention_heads
        assert largest < heads * len(rows.ids) * keys * 4, (largest, len(rows.ids), keys)
        measured.append((len(rows.ids), total))
    (rows_1, total_1), (rows_2, total_2) = measured
    assert rows_2 == 2 * rows_1
    assert total_2 <= 2.1 * total_1, measured
