"""DiffusionGemma (`model_type` "diffusion_gemma"), run by transformers' own `DiffusionGemmaForBlockDiffusion`
and its `generate`, behind the same `Engine.infill` contract as every other family.

DiffusionGemma is block diffusion without a mask token: a causal encoder pass caches the prompt, and each
canvas of `canvas_length` tokens starts as random vocabulary tokens that a bidirectional decoder pass
denoises; tokens it does not accept are re-noised with fresh random tokens, and the committed canvas is
the argmax. Nothing marks a position as "to be written", so fixed text cannot sit inside its canvas (it
would be noise the model is free to rewrite), and a gap in the middle of a canvas cannot be given a length
(the model writes a canvas-long continuation and ends it with EOS). So each gap is one generation of its
own: the continuation of the text before it (with the gaps before it as written; the text after the last
gap is read as the block families read it, by default not at all: `engine/families/block_layout.py`), whose
first tokens up to the first end token fill the gap, growing the span up to `max_grow` when the
continuation is longer. The gaps of one canvas are generated one after the other.

`params.steps` overrides the generation config's `max_denoising_steps`, `params.block` the canvas length,
`params.seed` seeds the random canvases; the entropy bound, the temperature schedule and the stopping
thresholds come from the checkpoint's generation_config.json. `cache`, `threshold` and `temperature` do
not apply (the sampler is the model's own, always).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from engine.denoise.canvas_batch import find_spans
from engine.denoise.seam import Family, LoadedModel, LoadSpec
from engine.denoise.state import DocKeys, RowFeed
from engine.families.block_layout import row_order
from engine.loading.build import CONTEXT_CAP
from engine.loading.checkpoint import CheckpointError, weight_files
from engine.loading.tokenizer import load_tokenizer
from engine.params import DenoiseParams
from engine.types import InfillRequest, InfillResult, ModelLoadError, Span, SpecialTokens, Stats


class GemmaModel(nn.Module):
    """The transformers model, plus what the engine reads of a model."""

    # Any: transformers' model, whose config carries the family's own fields (`canvas_length`, a text
    # config that its types allow to be a dict or None) and whose `generate` is typed for every family.
    def __init__(self, hf: Any, vocab: int) -> None:
        super().__init__()
        self.hf = hf
        self.input_vocab = vocab + 1  # canvases may hold the mask id, one past the vocabulary


def load_diffusion_gemma(load: LoadSpec, family: Family) -> LoadedModel:
    from transformers import DiffusionGemmaForBlockDiffusion

    spec, folder, device, dtype = load.spec, load.folder, load.device, load.dtype

    try:
        weight_files(folder)  # safetensors only; a pickle-only folder is refused here
    except CheckpointError as exc:
        raise ModelLoadError(f"model {spec}: {exc}") from None
    try:
        hf: Any = DiffusionGemmaForBlockDiffusion.from_pretrained(str(folder), dtype=dtype, use_safetensors=True)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise ModelLoadError(f"model {spec}: transformers cannot load it ({exc.__class__.__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    hf.to(device).eval()
    tokenizer = load_tokenizer(spec, folder)
    text = hf.config.text_config
    vocab = max(int(text.vocab_size), len(tokenizer))
    generation = hf.generation_config
    eos = _first(getattr(generation, "eos_token_id", None), text.eos_token_id, tokenizer.eos_token_id)
    if eos is None:
        raise ModelLoadError(f"model {spec}: no EOS token id in its configs or tokenizer")
    pad = _first(getattr(generation, "pad_token_id", None), text.pad_token_id)
    bos = _first(text.bos_token_id, tokenizer.bos_token_id)
    pad, bos = eos if pad is None else pad, eos if bos is None else bos
    special = SpecialTokens(mask_id=vocab, eos_id=eos, pad_id=pad, bos_id=bos)
    max_length = min(int(text.max_position_embeddings), CONTEXT_CAP)
    return LoadedModel(folder, family, GemmaModel(hf, vocab), tokenizer, special, max_length,  # type: ignore[arg-type]
                       device, dtype)


def _first(*values: Any) -> int | None:
    for v in values:
        if isinstance(v, (list, tuple)):
            v = v[0] if v else None
        if v is not None:
            return int(v)
    return None


class GemmaRunner:
    """`Engine`'s loop for DiffusionGemma: transformers' `generate`, one gap at a time."""

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded = loaded
        assert isinstance(loaded.model, GemmaModel), "load_diffusion_gemma loaded it"
        self.hf: Any = loaded.model.hf  # see GemmaModel
        self.special = loaded.special
        eos = getattr(self.hf.generation_config, "eos_token_id", None)
        self.end_ids = loaded.special.end_ids | set(eos if isinstance(eos, (list, tuple)) else [eos] if eos else [])

    def run(self, requests: list[InfillRequest], params: DenoiseParams, cancel: Callable[[], bool] | None = None,
            documents: DocKeys | None = None, feed: RowFeed | None = None) -> list[InfillResult]:
        queue = list(requests)
        done: list[InfillResult] = []
        index = 0
        with torch.inference_mode(), self._seeded(params.seed), self._canvas(params.block), _counting(self.hf) as count:
            while index < len(queue):
                if feed is not None:
                    queue += feed.admit()
                request = queue[index]
                result = self._fill(request, params, _stopper(cancel, request.cancel), count)
                if feed is not None:
                    feed.done(index, result)
                    feed.stepped(1)
                done.append(result)
                index += 1
        return done[: len(requests)]

    def _fill(self, request: InfillRequest, params: DenoiseParams, stopped: Callable[[], bool],
              count: dict[str, int]) -> InfillResult:
        ids = list(request.canvas)
        spans = find_spans(ids, self.special.mask_id)
        budget = request.max_grow
        before: dict[str, float] = dict(count)
        before["started"] = time.perf_counter()
        for i in range(len(spans)):
            if stopped():
                return self._result(ids, spans, count, before, True)
            start, end = spans[i]
            written = self._generate(self._prompt(ids, spans, start), end - start + budget, params, stopped)
            stops = self.end_ids | (request.span_stops[i] if i < len(request.span_stops) else frozenset())
            cut = next((j for j, t in enumerate(written) if t in stops), None)
            text = written if cut is None else written[: cut + (written[cut] not in self.end_ids)]
            extra = min(max(0, len(text) - (end - start)), budget)
            if extra:  # the continuation is longer than the gap: grow it, as the loop grows a filled span
                ids[end:end] = [self.special.mask_id] * extra
                for later in spans[i:]:
                    later[0] += extra if later is not spans[i] else 0
                    later[1] += extra
                budget -= extra
            width = spans[i][1] - start
            ids[start : start + width] = (text + [self.special.eos_id] * width)[:width]
        return self._result(ids, spans, count, before, False)

    def _prompt(self, ids: list[int], spans: list[list[int]], start: int) -> list[int]:
        """What the model reads before the gap at `start`, in sequence order (`block_layout.row_order`)."""
        order = row_order(ids, spans, len(ids), self.special.mask_id, self.special.end_ids,
                          self.loaded.family.reads_suffix).tolist()
        before = sorted((o, p) for p, o in enumerate(order) if 0 <= o < order[start])
        return [ids[p] for _, p in before] or [self.special.bos_id]

    def _generate(self, prompt: list[int], room: int, params: DenoiseParams, stopped: Callable[[], bool]) -> list[int]:
        from transformers import StoppingCriteria, StoppingCriteriaList

        class Cancelled(StoppingCriteria):
            def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
                return torch.full((input_ids.shape[0],), stopped(), dtype=torch.bool, device=input_ids.device)

        kwargs: dict[str, Any] = {"max_new_tokens": max(room, 1)}
        if params.steps is not None:
            kwargs["max_denoising_steps"] = params.steps
        x = torch.tensor([prompt], device=self.loaded.device)
        out = self.hf.generate(x, stopping_criteria=StoppingCriteriaList([Cancelled()]), **kwargs)
        sequences = out.sequences if hasattr(out, "sequences") else out
        tokens: list[int] = sequences[0, len(prompt) : len(prompt) + room].tolist()
        return tokens

    def _result(self, ids: list[int], spans: list[list[int]], count: dict[str, int], before: dict[str, float],
                cancelled: bool) -> InfillResult:
        result_spans = [Span(s, e, ids[s:e]) for s, e in spans]
        new = sum(1 for sp in result_spans for t in sp.token_ids if t not in self.end_ids and t != self.special.mask_id)
        stats = Stats(new_tokens=new, forward_passes=int(count["decoder"] - before["decoder"] + count["encoder"] - before["encoder"]),
                      seconds=time.perf_counter() - before["started"], positions=int(count["positions"] - before["positions"]))
        return InfillResult(ids, result_spans, stats, cancelled)

    @contextlib.contextmanager
    def _seeded(self, seed: int) -> Iterator[None]:
        devices = [self.loaded.device] if self.loaded.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            yield

    @contextlib.contextmanager
    def _canvas(self, length: int) -> Iterator[None]:
        config = self.hf.config
        saved = config.canvas_length
        config.canvas_length = length or saved
        try:
            yield
        finally:
            config.canvas_length = saved


def _stopper(*cancels: Callable[[], bool] | None) -> Callable[[], bool]:
    """True once any of the run's and the request's cancels fires."""
    return lambda: any(c is not None and c() for c in cancels)


@contextlib.contextmanager
def _counting(hf: Any) -> Iterator[dict[str, int]]:  # Any: see GemmaModel
    """Counts the decoder and encoder forwards (and the positions they run) while it is open."""
    count = {"decoder": 0, "encoder": 0, "positions": 0}

    def hook(kind: str) -> Callable[..., None]:
        def seen(module: nn.Module, args: Any, kwargs: dict[str, Any]) -> None:
            ids = kwargs.get("input_ids") if kind == "encoder" else kwargs.get("decoder_input_ids")
            count[kind] += 1
            count["positions"] += int(ids.shape[-1]) if ids is not None else 0
        return seen

    handles = [hf.model.encoder.register_forward_pre_hook(hook("encoder"), with_kwargs=True),
               hf.model.decoder.register_forward_pre_hook(hook("decoder"), with_kwargs=True)]
    try:
        yield count
    finally:
        for handle in handles:
            handle.remove()
