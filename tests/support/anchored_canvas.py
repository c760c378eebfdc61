"""A canvas of the tiny anchored model with two gaps, as several engine tests fill it."""

from __future__ import annotations

from engine import Engine


def multi_spot(anchored: Engine) -> list[int]:
    sp, tok = anchored.special, anchored.tokenizer
    return ([sp.bos_id] + tok.encode("import os\n\ndef first(items):\n    return") + [sp.mask_id] * 6
            + tok.encode("\n\n\ndef last(items):\n    return") + [sp.mask_id] * 4
            + tok.encode("\n\nprint(first([1]))\n") + [sp.eos_id])
