"""The converted base's tokenizer served by the `tokenizers` library alone gives what `transformers` gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from transformers import AutoTokenizer

from engine.loading.folders import DEFAULT_MODEL_DIR
from engine.loading.gguf_base import base_folder
from engine.loading.tokenizer import FastTokenizer

SOURCES = [Path(__file__).read_text(), (Path(__file__).parents[2] / "engine" / "denoise" / "loop.py").read_text(),
           "déjà vu: 'naïve' café — ünïcode\ttabs\n\n\r\n  spaces   ", "<|im_start|>x<|im_end|>"]


@pytest.fixture(scope="module", params=["tiny", "bundled"])
def both(request, tiny_anchored) -> tuple[FastTokenizer, object]:
    """The tiny test tokenizer, and SmolLM2's (the bundled model's base)."""
    model = tiny_anchored if request.param == "tiny" else DEFAULT_MODEL_DIR
    folder = base_folder(json.loads((model / "config.json").read_text())["base"])
    return FastTokenizer(folder), AutoTokenizer.from_pretrained(str(folder))


def test_encode_decode_and_specials_equal_transformers(both):
    fast, slow = both
    for text in SOURCES:
        for special in (True, False):
            assert fast.encode(text, add_special_tokens=special) == slow.encode(text, add_special_tokens=special)
        ids = slow.encode(text, add_special_tokens=False)
        for skip in (True, False):
            for clean in (None, False):
                assert fast.decode(ids, skip_special_tokens=skip, clean_up_tokenization_spaces=clean) == \
                    slow.decode(ids, skip_special_tokens=skip, clean_up_tokenization_spaces=clean)
    assert len(fast) == len(slow)
    assert fast.all_special_ids == sorted(slow.all_special_ids)
    for role in ("bos", "eos", "pad", "unk"):
        assert getattr(fast, f"{role}_token_id") == getattr(slow, f"{role}_token_id"), role


def test_every_id_decodes_alone_as_transformers_decodes_it(both):
    fast, slow = both
    ids = [[i] for i in range(len(slow))]
    assert fast.batch_decode(ids, clean_up_tokenization_spaces=False) == \
        slow.batch_decode(ids, clean_up_tokenization_spaces=False)


def test_saved_files_load_in_transformers(both, tmp_path):
    fast, slow = both
    fast.save_pretrained(tmp_path)
    again = AutoTokenizer.from_pretrained(str(tmp_path))
    assert again.encode(SOURCES[1], add_special_tokens=False) == slow.encode(SOURCES[1], add_special_tokens=False)
