"""Held-out score of the adapter, per objective (training.objectives), on fixed windows of the validation
split and the held-out next-edit examples.

Per objective: the mean cross-entropy of committed rows (`ce_committed`: next-token prediction with the
right context) and of mask rows (`ce_mask`: the lookahead), and the accuracy of committed rows. For the
`header` objective the same gaps are scored again without the header (`header_gain`: how much lower the
cross-entropy is with it: what reading the header buys). `score`, which picks the best adapter, is minus the
mean over objectives of (ce_committed + ce_mask) / 2, so multi-line gaps and header windows weigh as much
as single lines. `acc_base` (once per set, the adapter off) is the base's committed-row accuracy on the
same tokens.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import torch

from training.objectives import OBJECTIVES, Example, Sampler, without_header
from training.packed import loss_of, packed_logits


@dataclass
class EvalSet:
    examples: list[Example]
    base_right: dict[str, float] = field(default_factory=dict)

    @classmethod
    def build(cls, sampler: Sampler, windows: int, kinds: tuple[str, ...] = OBJECTIVES, seed: int = 1234) -> EvalSet:
        rng = random.Random(seed)
        examples = []
        for kind in kinds:
            found, tries = 0, 0
            while found < windows and tries < windows * 20:
                tries += 1
                example = sampler.example(kind, rng)
                if example is not None:
                    examples.append(example)
                    found += 1
        return cls(examples)


def _score_one(model, example: Example, eos: int, enabled: bool = True) -> tuple[dict[str, float], torch.Tensor]:
    logits = packed_logits(model, example.ids, example.gaps, example.rows, eos, enabled)
    _, stats = loss_of(logits, example.rows)
    return stats, logits.argmax(-1)


@torch.no_grad()
def evaluate(model, val: EvalSet, eos: int) -> dict[str, float]:
    by_kind: dict[str, dict[str, list[float]]] = {}
    first = not val.base_right
    base_counts: dict[str, list[int]] = {}
    for example in val.examples:
        stats, pred = _score_one(model, example, eos)
        targets = torch.tensor(example.rows.targets)
        committed = torch.tensor(example.rows.block) == 0
        acc = by_kind.setdefault(example.kind, {"ce_committed": [], "ce_mask": [], "right": [], "total": [],
                                                "ce_no_header": []})
        acc["ce_committed"].append(stats["ce_committed"])
        acc["ce_mask"].append(stats["ce_mask"])
        acc["right"].append(float((pred[committed] == targets[committed]).sum()))
        acc["total"].append(float(committed.sum()))
        if example.header:
            plain, _ = _score_one(model, without_header(example), eos)
            acc["ce_no_header"].append((plain["ce_committed"] + plain["ce_mask"]) / 2)
        if first:
            _, base = _score_one(model, example, eos, enabled=False)
            counts = base_counts.setdefault(example.kind, [0, 0])
            counts[0] += int((base[committed] == targets[committed]).sum())
            counts[1] += int(committed.sum())
    if first:
        val.base_right = {k: right / max(total, 1) for k, (right, total) in base_counts.items()}
    out: dict[str, float] = {}
    losses = []
    for kind, acc in by_kind.items():
        ce_c, ce_m = float(np.mean(acc["ce_committed"])), float(np.mean(acc["ce_mask"]))
        losses.append((ce_c + ce_m) / 2)
        out[f"{kind}/ce_committed"] = ce_c
        out[f"{kind}/ce_mask"] = ce_m
        out[f"{kind}/acc_committed"] = sum(acc["right"]) / max(sum(acc["total"]), 1.0)
        out[f"{kind}/acc_base"] = val.base_right.get(kind, float("nan"))
        if acc["ce_no_header"]:
            out[f"{kind}/header_gain"] = float(np.mean(acc["ce_no_header"])) - (ce_c + ce_m) / 2
    out["score"] = -float(np.mean(losses)) if losses else float("nan")
    return {k: round(v, 4) for k, v in out.items()}
