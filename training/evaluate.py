"""Held-out score of the adapter: next-token accuracy of committed gap rows (which see the right context)
against the base alone (which does not), and what the mask rows would let the sampler commit per step.

`extra@0.9` is the mean number of tokens a step commits beyond the first one under the leading-run rule
at threshold 0.9 (consecutive masks whose top probability reaches it), `extra_right` the share of those
that are the true tokens. `score`, which picks the best adapter, is minus the mean cross-entropy of
committed and mask rows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import torch

from training.gaps import Corpus, Gap, choose_window, sample_gaps
from training.packed import Rows, build_rows, loss_of, packed_logits

THRESHOLD = 0.9


@dataclass
class EvalSet:
    examples: list[tuple[np.ndarray, list[Gap], Rows]]
    base_right: float

    @classmethod
    def build(cls, corpus: Corpus, n_gaps: int, width: int, special, seed: int = 1234) -> EvalSet:
        rng = random.Random(seed)
        examples = []
        count = 0
        while count < n_gaps:
            window = choose_window(corpus, rng, width)
            tf = corpus.file(window.file)
            ids = np.concatenate([[special.eos], tf.ids[window.start : window.start + window.length]])
            gaps = sample_gaps(corpus, window, rng, 6)
            if not gaps:
                continue
            rows = build_rows(ids, gaps, special.mask, special.eos, 2, 7, rng)
            examples.append((ids, gaps, rows))
            count += len(gaps)
        return cls(examples, float("nan"))


@torch.no_grad()
def evaluate(model, val: EvalSet, special) -> dict[str, float]:
    right = total = 0
    base_right = 0
    ce_c, ce_m = [], []
    extra, extra_ok, blocks = 0, 0, 0
    by_distance: dict[int, list[int]] = {}
    for ids, gaps, rows in val.examples:
        logits = packed_logits(model, ids, gaps, rows, special.eos)
        _, stats = loss_of(logits, rows)
        ce_c.append(stats["ce_committed"])
        ce_m.append(stats["ce_mask"])
        probs = logits.float().softmax(-1)
        conf, pred = probs.max(-1)
        targets = torch.tensor(rows.targets)
        block = torch.tensor(rows.block)
        committed = block == 0
        right += int((pred[committed] == targets[committed]).sum())
        total += int(committed.sum())
        if val.base_right != val.base_right:  # base accuracy once, with the adapter switched off
            base = packed_logits(model, ids, gaps, rows, special.eos, enabled=False).argmax(-1)
            base_right += int((base[committed] == targets[committed]).sum())
        starts: dict[tuple[int, int], int] = {}
        for r, (g, b, o, k) in enumerate(zip(rows.gap, rows.block, rows.offset, rows.block_k)):
            if b == 0:
                continue
            d = o - k + 1
            by_distance.setdefault(d, []).append(int(pred[r] == targets[r]))
            starts.setdefault((g, b), r)
        for (g, b), r in starts.items():
            blocks += 1
            while r < len(rows.ids) and rows.gap[r] == g and rows.block[r] == b and float(conf[r]) >= THRESHOLD:
                extra += 1
                extra_ok += int(pred[r] == targets[r])
                r += 1
    if val.base_right != val.base_right:
        val.base_right = base_right / max(total, 1)
    out = {
        "score": -float(np.mean(ce_c) + np.mean(ce_m)) / 2,
        "ce_committed": float(np.mean(ce_c)),
        "ce_mask": float(np.mean(ce_m)),
        "acc_committed": right / max(total, 1),
        "acc_base": val.base_right,
        "extra@0.9": extra / max(blocks, 1),
        "extra_right": extra_ok / max(extra, 1),
    }
    for d in sorted(by_distance)[:4]:
        out[f"acc_mask_d{d}"] = float(np.mean(by_distance[d]))
    return {k: round(v, 4) for k, v in out.items()}
