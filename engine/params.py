"""Per-request denoising parameters, validated where they are built."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

Alg = Literal["maskgit_plus", "topk_margin", "entropy"]
Rule = Literal["reference", "threshold"]
CacheMode = Literal["none", "fixed"]
ALGS: tuple[Alg, ...] = ("maskgit_plus", "topk_margin", "entropy")
RULES: tuple[Rule, ...] = ("reference", "threshold")
CACHE_MODES: tuple[CacheMode, ...] = ("none", "fixed")


@dataclass(frozen=True)
class DenoiseParams:
    """How to denoise a batch of canvases.

    steps: denoising steps of the reference rule (None: one per mask, as the official samplers are run);
        the threshold rule needs no step budget, since every step commits at least one token per span.
    alg: confidence score (max probability, top-1 minus top-2 probability, or negative entropy).
    rule: "reference" commits the family's own schedule of tokens per step; "threshold" commits every
        masked position whose confidence is >= threshold, and always the most confident one of each span.
    cache: "fixed" keeps the keys/values of fixed text between full refreshes and runs only the mask
        spans as queries; "none" recomputes the whole canvas every step.
    refresh_every: with cache="fixed", a full forward every k steps (1 = every step, exact). 0 means
        only when a span grows (its later positions move). Between refreshes a step runs the masks and
        the tokens committed in the step before; older committed tokens keep the K/V of that step.
    near: with cache="fixed", the fixed text within `near` tokens of each span that is still changing
        is recomputed every step with it (the rest keeps the K/V of the last refresh): the text next to a
        gap is what its contents change most. With the bundled model writing 32-token spans, agreement
        with the official loop is 0.54 at near 0, 0.71 at 1 and 0.79 at 4; but every open span adds
        2 x near queries per step, which a canvas of 8 spots pays 8 times (bench.speed / bench.multispot
        --near), so the default is 1.
    block: with the threshold rule, only the first `block` masks of each span (left to right) are
        candidates each step, and only they run as queries; the masks beyond keep the K/V of the last
        refresh. Semi-autoregressive decoding (LLaDA's blocks, Fast-dLLM's dual cache): a step costs
        `block` positions instead of every mask, for long spans. 0 (default) makes every mask a candidate.
    fill_after_eos: with the threshold rule, end tokens form one run at the end of a span: once a span
        commits an end token every mask after it becomes an end token too (DreamOn's pad-EOS-to-the-right),
        and the masks just before it that also propose an end token are committed with it, so an empty
        tail costs one step, not one per position (`policies.end_run`); the reference rule never does.
    eos_penalty: subtracted from the end-token logits before proposing, for models that over-produce EOS
        in gaps (LLaDA's evaluation suppresses EOS for the same reason); 0 keeps the family's sampler exact.
    adapter: anchored family only; False runs the base model alone (no LoRA, committed tokens do not see
        the text after their gap) and commits one token per span per step: greedy autoregressive decoding
        of the base from the prefix, the baseline every figure is compared with.

    verify: left-to-right families (anchored): the masks after each span's first are drafts (those
        proposed with confidence >= `threshold`), kept only when the next step's committed rows propose
        the same tokens (`policies.speculate`), so greedy output is exactly one-token-per-step decoding,
        and with sampling each written token is a draw from the logits of the text before it, as
        one-token-per-step sampling draws it; `threshold` only sets how much is drafted. False: the masks
        after the first are committed outright while their confidence reaches `threshold`
        (`policies.select_leading_run`): faster where drafts are often wrong, not exact.

    Left-to-right families commit a leading run of each span every step; the reference rule commits one
    token per span per step; `block` 0 means the family's trained lookahead.
    """

    steps: int | None = None
    alg: Alg = "maskgit_plus"
    rule: Rule = "threshold"
    threshold: float = 0.9
    temperature: float = 0.0
    top_p: float | None = None
    seed: int = 0
    cache: CacheMode = "fixed"
    refresh_every: int = 0
    eps: float = 1e-3
    block: int = 0
    near: int = 1
    fill_after_eos: bool = True
    eos_penalty: float = 0.0
    adapter: bool = True
    verify: bool = True

    def __post_init__(self) -> None:
        if self.steps is not None and self.steps < 1:
            raise ValueError(f"steps must be >= 1, got {self.steps}")
        if self.alg not in ALGS:
            raise ValueError(f"alg {self.alg!r}: use one of {', '.join(ALGS)}")
        if self.rule not in RULES:
            raise ValueError(f"rule {self.rule!r}: use one of {', '.join(RULES)}")
        if self.cache not in CACHE_MODES:
            raise ValueError(f"cache {self.cache!r}: use one of {', '.join(CACHE_MODES)}")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {self.threshold}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_p is not None and not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.eos_penalty < 0:
            raise ValueError(f"eos_penalty must be >= 0, got {self.eos_penalty}")
        if self.near < 0:
            raise ValueError(f"near must be >= 0, got {self.near}")
        if self.block < 0:
            raise ValueError(f"block must be >= 0, got {self.block}")
        if self.block and self.rule != "threshold":
            raise ValueError("block needs the threshold rule (the reference rule follows the family's schedule)")
        if self.refresh_every < 0:
            raise ValueError(f"refresh_every must be >= 0, got {self.refresh_every}")

    @classmethod
    def reference(cls, steps: int | None = None, alg: Alg = "maskgit_plus") -> DenoiseParams:
        """The family's own sampler on an in-place canvas, no cache: the exact-reproduction mode."""
        return cls(steps=steps, alg=alg, rule="reference", cache="none")

    @classmethod
    def fast(cls, threshold: float = 0.9) -> DenoiseParams:
        """Fast-dLLM-style: confidence threshold plus the fixed-text cache."""
        return cls(rule="threshold", threshold=threshold, cache="fixed")

    def with_(self, **changes: Any) -> DenoiseParams:
        return replace(self, **changes)
