"""The default model's training pipeline: tokenizer, infill examples, objective, export."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch

from engine.training.data import SpecialIds, TokenizedCorpus, infill_example, plain_example
from engine.training.infill_cuts import choose_cut, line_starts
from engine.training.objective import add_noise, diffusion_loss
from engine.training.tokenizer import BOS, EOS, MASK, train_tokenizer, wrap, write_tokenizer_files

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
def tokenizer():
    texts = [SAMPLE.replace("Greeter", name) for name in ("Greeter", "Host", "Caller", "Speaker")] * 8
    return wrap(train_tokenizer(iter(texts), vocab_size=400), model_max_length=128)


@pytest.fixture(scope="module")
def special(tokenizer) -> SpecialIds:
    return SpecialIds(tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.mask_token_id)


def test_special_tokens_and_no_implicit_specials(tokenizer, special):
    assert (tokenizer.eos_token, tokenizer.bos_token, tokenizer.mask_token) == (EOS, BOS, MASK)
    assert tokenizer.pad_token_id == tokenizer.eos_token_id
    assert len({special.bos, special.eos, special.mask}) == 3
    ids = tokenizer("x = 1")["input_ids"]
    assert special.bos not in ids and special.eos not in ids
    assert tokenizer.encode(MASK) == [special.mask]


@pytest.mark.parametrize(
    "text",
    [
        "\tdef f(x):\r\n\t\treturn x  # ¡olé!\r\n",
        "s = '世界 🎉 naïve'\n",
        "a\u00a0=\u20281\n\n\n   \t \n",
        "",
    ],
)
def test_round_trip_is_exact(tokenizer, text):
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_indentation_runs_are_single_tokens(tokenizer):
    for width in (4, 8, 12):
        assert len(tokenizer.encode(" " * width)) == 1, width
    assert tokenizer.convert_ids_to_tokens(tokenizer.encode("        return out"))[0] == "Ġ" * 8


def test_saved_tokenizer_loads_with_auto_tokenizer(tokenizer, tmp_path):
    from transformers import AutoTokenizer

    write_tokenizer_files(tokenizer, tmp_path)
    assert (tmp_path / "special_tokens_map.json").exists()
    loaded = AutoTokenizer.from_pretrained(str(tmp_path))
    assert loaded.mask_token_id == tokenizer.mask_token_id and loaded.bos_token_id == tokenizer.bos_token_id
    assert loaded("def f():")["input_ids"] == tokenizer.encode("def f():")


def test_line_cuts_fall_on_line_boundaries():
    rng = random.Random(0)
    starts = line_starts(SAMPLE)
    seen = 0
    for _ in range(300):
        cut = choose_cut(SAMPLE, rng, (0, len(SAMPLE)), None, starts)
        assert cut.prefix + cut.middle + cut.suffix == SAMPLE
        if cut.kind == "lines":
            seen += 1
            assert cut.prefix == "" or cut.prefix.endswith("\n")
            assert cut.middle.endswith("\n") and cut.middle.strip()
        if cut.kind == "rest_of_line":
            assert "\n" not in cut.middle and (cut.suffix == "" or cut.suffix.startswith("\n"))
    assert seen > 50


def test_infill_example_is_bos_prefix_middle_eos_suffix(tokenizer, special):
    corpus = TokenizedCorpus([SAMPLE], tokenizer, special)
    rng = random.Random(1)
    kinds = set()
    for _ in range(200):
        example = infill_example(corpus, rng, 128)
        if example is None:
            continue
        kinds.add(example.kind)
        assert len(example.ids) == 128 and example.ids[0] == special.bos and not example.maskable[0]
        region = [i for i, m in enumerate(example.maskable) if m]
        assert region == list(range(region[0], region[-1] + 1))  # one contiguous gap
        gap = [example.ids[i] for i in region]
        n_eos = next((i for i, t in enumerate(reversed(gap)) if t != special.eos), len(gap))
        middle = tokenizer.decode(gap[: len(gap) - n_eos])
        prefix = tokenizer.decode(example.ids[1 : region[0]])
        assert special.eos not in gap[: len(gap) - n_eos]
        assert (prefix + middle) in SAMPLE
        if example.kind == "lines":
            assert prefix == "" or prefix.endswith("\n")
            assert middle.endswith("\n")
    assert {"lines", "node", "rest_of_line"} <= kinds


def test_masking_never_touches_bos_and_respects_maskable(tokenizer, special):
    corpus = TokenizedCorpus([SAMPLE] * 3, tokenizer, special)
    rng = random.Random(2)
    examples = [plain_example(corpus, rng, 64) for _ in range(4)]
    ids = torch.tensor([e.ids for e in examples])
    maskable = torch.tensor([e.maskable for e in examples])
    maskable[1, 10:] = False
    noised = add_noise(ids, maskable, special.mask, t=torch.tensor([1.0, 1.0, 0.5, 1e-3]))
    assert not noised.masked[:, 0].any()
    assert not (noised.masked & ~maskable).any()
    assert noised.masked[0, 1:].all() and noised.masked.sum(1).min() >= 1
    assert (noised.noisy[noised.masked] == special.mask).all()
    drawn = add_noise(ids.repeat(2, 1), maskable.repeat(2, 1), special.mask).t.sort().values
    gaps = drawn[1:] - drawn[:-1]
    assert drawn.min() >= 1e-3 and drawn.max() <= 1
    assert torch.allclose(gaps, torch.full_like(gaps, gaps.mean()), atol=1e-3)  # stratified over the batch


def test_training_steps_reduce_loss_on_a_repeated_batch(tokenizer, special):
    from engine.training.train import PRESETS, build_model, make_optimizer

    torch.manual_seed(0)
    model = build_model(PRESETS["tiny"], len(tokenizer), 64, special)
    corpus = TokenizedCorpus([SAMPLE] * 3, tokenizer, special)
    rng = random.Random(3)
    examples = [plain_example(corpus, rng, 64) for _ in range(4)]
    ids = torch.tensor([e.ids for e in examples])
    maskable = torch.tensor([e.maskable for e in examples])
    noised = add_noise(ids, maskable, special.mask, generator=torch.Generator().manual_seed(0))
    optimizer = make_optimizer(model, 1e-2, 0.0)
    first = None
    for _ in range(15):
        loss, _ = diffusion_loss(model, ids, maskable, noised)
        first = loss.item() if first is None else first
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    assert loss.item() < 0.7 * first


def test_train_resume_and_export_load_back(tokenizer, tmp_path: Path):
    import json

    from transformers import AutoTokenizer

    from engine.loader import load
    from engine.training.train import main

    corpus_dir, tok_dir, run = tmp_path / "corpus", tmp_path / "tok", tmp_path / "run"
    corpus_dir.mkdir()
    for split in ("train", "val"):
        rows = [{"package": "p", "path": f"{i}.py", "text": SAMPLE} for i in range(3)]
        (corpus_dir / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_tokenizer_files(tokenizer, tok_dir)
    common = [
        "--out",
        str(run),
        "--preset",
        "tiny",
        "--tokenizer",
        str(tok_dir),
        "--corpus",
        str(corpus_dir),
        "--seq-len",
        "64",
        "--batch-size",
        "2",
        "--eval-every",
        "2",
        "--eval-batches",
        "1",
        "--threads",
        "1",
    ]
    main([*common, "--steps", "2"])
    main([*common, "--steps", "4", "--resume"])
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [e["step"] for e in log if e["event"] == "done"] == [2, 4]
    target = tmp_path / "model"
    main(["--out", str(run), "--tokenizer", str(tok_dir), "--export", str(target)])
    names = {p.name for p in target.iterdir()}
    assert {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "generation_config.json",
    } <= names
    hf = AutoTokenizer.from_pretrained(str(target))
    assert hf.mask_token_id == tokenizer.mask_token_id
    loaded = load(str(target), device="cpu")
    assert (
        loaded.special.mask_id == tokenizer.mask_token_id and loaded.special.bos_id == tokenizer.bos_token_id
    )
    assert loaded.max_length == 64
    logits = loaded.model(torch.tensor([[tokenizer.bos_token_id, tokenizer.mask_token_id]]))
    assert logits.shape == (1, 2, len(tokenizer))
