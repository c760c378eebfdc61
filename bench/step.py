"""Where one step's time goes: our anchored step beside `transformers` and llama.cpp on the same weights.

    python -m bench.step [--model default] [--contexts 256,1024] [--rows 1,4,8,16] [--repeats 8]
                         [--dtype D] [--no-reference]

For each cache length (tokens of text before the gap) and each number of query rows, one decoding step of
the bundled model's engine (`AnchoredPredictor.predict` after the prefill, the rows a real step runs: the
last written token and the masks after it), split in the same run two ways. In the step, by removal (the
step timed again with a part's calls answering what they answered the first time, without their work):
  products   the weight products (blocks and head) as the step runs them
  attn       the decoding attention as the step runs it
  rest       the step with both removed: embeddings, norms, rotary, cache writes, masks, Python
Alone, each part called by itself in a loop (its data stays in the caches more than in a step, so these
read below the in-step figures; the gap is what a step pays for streaming weights and keys from memory):
  linear     the block projections at that row count, called through the model's own modules
  head       the vocabulary projection at that row count
  attention  the K/V cache writes and reads and the attention kernels, replayed from one real step
and what the adapter adds (`adapter`: the step with the adapter on minus the step with it off); where a load
gave the step dcomplete's C kernels for attention, norms and rotations (`engine.kernels.row_attention`,
`row_ops`), `on_torch` is the step on torch's forms of them instead, the two taking turns; and, side
by side, `transformers`' LlamaForCausalLM over the same dequantized base weights (fp32) with its
KV cache (a step of the same rows against a cache of the same length), and llama.cpp (llama-cpp-python,
only when installed: it is never a dependency) on the same GGUF file. Prefill rows: the whole context in
one forward (ours: the engine's own prefill of the canvas). Times are medians of `--repeats` runs,
interleaved; quote ratios from one run. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from bench.step_kernels import Compiled, TorchForms, decoding_kernels, native_kernels, side_by_side
from bench.step_references import TransformersStep, llama_cpp, llama_cpp_kernels, transformers_model
from bench.workload import package_versions, source_files
from engine import DenoiseParams, Engine
from engine.denoise.canvas_batch import CanvasBatch
from engine.families.anchored_step import AnchoredPredictor
from engine.kernels.projections import FusedProjections
from engine.loading.calibrate import DecodingRows
from engine.loading.compiled import cpu_flags
from engine.loading.tuning import cpu_name
from engine.models import anchored, layers

GAP = 32
SUFFIX = 64
WRITTEN = 4  # tokens the gap holds when a step is timed: its last one is a query row, as in decoding


def time_ms(fn: Callable[[], object], repeats: int = 3,
            pick: Callable[[list[float]], float] = min) -> float:
    """`pick` (the fastest by default: the least disturbed by other work) of `repeats` timed calls after a
    warm-up, in milliseconds."""
    fn()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return pick(times) * 1000


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    return time_ms(fn, repeats, statistics.median)


def context_ids(engine: Engine, tokens: int) -> tuple[list[int], list[int], list[int]]:
    """`tokens` ids of real code before the gap, the WRITTEN ids the gap holds already, and SUFFIX ids
    after it."""
    text = max((p.read_text(encoding="utf-8") for p in source_files()), key=len)
    ids = engine.tokenizer.encode(text, add_special_tokens=False)
    return ids[:tokens], ids[tokens : tokens + WRITTEN], ids[tokens + GAP : tokens + GAP + SUFFIX]


class OurStep:
    """One anchored predictor over a canvas [bos] + prefix + masks + suffix, prefilled once."""

    def __init__(self, engine: Engine, prefix: list[int], written: list[int], suffix: list[int],
                 adapter: bool) -> None:
        sp = engine.special
        self.canvas = [sp.bos_id, *prefix, *[sp.mask_id] * GAP, *suffix]
        self.engine = engine
        self.params = DenoiseParams(adapter=adapter)
        self.batch = CanvasBatch.build([self.canvas], [0], sp.mask_id, sp.pad_id, engine.loaded.device)
        start = len(prefix) + 1
        self.batch.x[0, start : start + len(written)] = torch.tensor(written)
        self.predictor = AnchoredPredictor(engine.loaded, self.batch, self.params)
        self.no_change = torch.zeros_like(self.batch.masked)
        self.predict(1)  # the prefill

    def predict(self, rows: int) -> torch.Tensor:
        with torch.inference_mode():
            return self.predictor.predict(self.batch, self.batch.leading_masks(rows), self.no_change)[0]

    def prefill(self) -> None:
        """The first step of a fresh predictor over the canvas: every fixed token runs."""
        with torch.inference_mode():
            fresh = AnchoredPredictor(self.engine.loaded, self.batch, self.params)
            fresh.predict(self.batch, self.batch.leading_masks(1), self.no_change)


class Recorder:
    """The attention kernels and cache reads/writes of one step, captured to be replayed alone: the fused
    kernel's calls, and a decoding step's attention (`layers.decoding_attention`, which runs products or,
    in its fallback, the fused kernel: recorded once)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        self.inside = False

    def __enter__(self) -> Recorder:
        self.sdpa = F.scaled_dot_product_attention
        self.keys = layers.ForwardContext.keys
        self.decoding = anchored.decoding_attention
        recorder = self

        def sdpa(*args: Any, **kwargs: Any) -> Any:
            if not recorder.inside:
                recorder.calls.append((recorder.sdpa, args, kwargs))
            return recorder.sdpa(*args, **kwargs)

        def decoding(*args: Any) -> Any:
            recorder.calls.append((recorder.decoding, args, {}))
            recorder.inside = True
            try:
                return recorder.decoding(*args)
            finally:
                recorder.inside = False

        def keys(ctx: Any, *args: Any) -> Any:
            recorder.calls.append((recorder.keys, (ctx, *args), {}))
            return recorder.keys(ctx, *args)

        F.scaled_dot_product_attention = sdpa  # type: ignore[assignment]
        anchored.decoding_attention = decoding
        layers.ForwardContext.keys = keys  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        F.scaled_dot_product_attention = self.sdpa  # type: ignore[assignment]
        anchored.decoding_attention = self.decoding
        layers.ForwardContext.keys = self.keys  # type: ignore[method-assign]

    def replay(self) -> None:
        with torch.inference_mode():
            for fn, args, kwargs in self.calls:
                fn(*args, **kwargs)


class Frozen:
    """Within `with`, the patched callables answer, call by call, what they answered during `record()`,
    without doing their work: timing a step within it and without it gives what those calls cost in the
    step. Calls made inside a patched call (the head's product inside a block product's) pass through."""

    def __init__(self, targets: list[tuple[Any, str]]) -> None:
        self.targets = targets
        self.outputs: list[Any] = []
        self.recording = False

    def record(self, step: Callable[[], object]) -> None:
        self.outputs.clear()
        self.recording = True
        with self:
            step()
        self.recording = False

    def __enter__(self) -> Frozen:
        self.saved = [getattr(owner, name) for owner, name in self.targets]
        self.next, self.inside = 0, False
        for (owner, name), fn in zip(self.targets, self.saved):
            setattr(owner, name, self._wrap(fn))
        return self

    def _wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if self.inside:
                return fn(*args, **kwargs)
            if not self.recording:
                self.next += 1
                return self.outputs[(self.next - 1) % len(self.outputs)]
            self.inside = True
            try:
                out = fn(*args, **kwargs)
            finally:
                self.inside = False
            self.outputs.append(out)
            return out
        return call

    def __exit__(self, *exc: object) -> None:
        for (owner, name), fn in zip(self.targets, self.saved):
            setattr(owner, name, fn)


def without(parts: Frozen, step: Callable[[], object], repeats: int) -> float:
    """The median ms of `step` with `parts` answering from their record."""
    parts.record(step)
    with parts:
        return median_ms(step, repeats)


PRODUCTS = [(FusedProjections, "__call__"), (FusedProjections, "product")]
ATTENTION = [(anchored, "decoding_attention")]


def linear_calls(engine: Engine, rows: int) -> tuple[Callable[[], None], Callable[[], None]]:
    """(the block projections with the adapter's folded LoRA, the head) at `rows` rows, through the
    model's own modules."""
    model = engine.loaded.model
    shape = model.shape
    x = torch.randn(1, rows, shape.hidden_size)
    inner = torch.randn(1, rows, shape.intermediate_size)
    adapt = DecodingRows(rows)

    def blocks() -> None:
        with torch.inference_mode():
            for i, block in enumerate(model.model.layers):
                block.self_attn.qkv(x, adapt, i)
                block.self_attn.out(x, adapt, i)
                block.mlp.gate_up(x, adapt, i)
                block.mlp.down(inner, adapt, i)

    def head() -> None:
        with torch.inference_mode():
            model.project(x)

    return blocks, head


def measure(engine: Engine, reference: torch.nn.Module | None, context: int, rows_list: list[int],
            repeats: int, threads: int, compiled: Compiled | None = None) -> dict[str, dict[str, float | None]]:
    prefix, written, suffix = context_ids(engine, context)
    on, off = (OurStep(engine, prefix, written, suffix, adapter) for adapter in (True, False))
    ids = [engine.special.bos_id, *prefix, *written]
    theirs = TransformersStep(reference, ids) if reference is not None else None
    cpp = llama_cpp(engine, ids, threads)
    torch_forms = TorchForms(engine) if native_kernels(engine) else None
    out: dict[str, dict[str, float | None]] = {}
    for rows in rows_list:
        blocks, head = linear_calls(engine, rows)
        with Recorder() as recorder:
            on.predict(rows)
        predict = lambda rows=rows: on.predict(rows)  # noqa: E731
        on_torch = None
        if torch_forms is not None:
            step, on_torch = side_by_side(predict, torch_forms, repeats)
        else:
            step = median_ms(predict, repeats)
        row: dict[str, float | None] = {
            "step": step,
            "no_adapter": median_ms(lambda rows=rows: off.predict(rows), repeats),
            "linear": median_ms(blocks, repeats),
            "head": median_ms(head, repeats),
            "attention": median_ms(recorder.replay, repeats),
            "transformers": median_ms(lambda rows=rows: theirs.step(rows), repeats) if theirs else None,
            "llama_cpp": median_ms(lambda rows=rows: cpp.step(rows), repeats) if cpp else None,
        }
        if compiled is not None:
            row["eager_step"], row["compiled"] = side_by_side(predict, compiled, repeats)
        if on_torch is not None:
            row["on_torch"] = on_torch
        row["products"] = step - without(Frozen(PRODUCTS), predict, repeats)
        row["attn"] = step - without(Frozen(ATTENTION), predict, repeats)
        row["rest"] = without(Frozen(PRODUCTS + ATTENTION), predict, repeats)
        row["adapter"] = step - float(row["no_adapter"] or 0)
        out[str(rows)] = row
    few = max(2, repeats // 4)
    out["prefill"] = {
        "step": median_ms(on.prefill, few),
        "transformers": median_ms(theirs.prefill, few) if theirs else None,
        "llama_cpp": median_ms(cpp.prefill, few) if cpp else None,
    }
    return out


def width(column: str) -> int:
    return max(6, len(column))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.step", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--dtype", default=None, help="the engine's weights (default: the engine's choice)")
    parser.add_argument("--contexts", default="256,1024")
    parser.add_argument("--rows", default="1,4,8,16")
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--no-reference", action="store_true", help="skip transformers and llama.cpp")
    parser.add_argument("--compiled", action="store_true",
                        help="also the step on the compiled int8 products (built, or loaded from the cache, first)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    engine = Engine.load(args.model, device="cpu", dtype=args.dtype, compiled="int8" if args.compiled else "off")
    while engine.calibrate_step():  # this machine's kernels (measured, or read from the cache), and with --compiled
        pass                        # the compiled products' build and swap, as a server has them after its first start
    ready_s = time.perf_counter() - started
    compiled = Compiled(engine) if args.compiled else None
    if compiled is not None and not all(compiled.kernels):
        parser.error("--compiled: the compiled products could not be built here (the log says why)")
    if not engine.left_to_right:
        parser.error(f"model {args.model}: bench.step measures the anchored family's step")
    reference = None if args.no_reference else transformers_model(engine)
    threads = torch.get_num_threads()
    rows_list = [int(r) for r in args.rows.split(",")]
    results = {}
    for context in (int(c) for c in args.contexts.split(",")):
        results[str(context)] = measure(engine, reference, context, rows_list, args.repeats, threads, compiled)
    cpu, kernels = cpu_name() or platform.machine(), llama_cpp_kernels()
    print(f"model {engine.name} ({engine.family}, dtype {args.dtype or 'default'}); "
          f"{cpu} ({' '.join(f for f in cpu_flags() if f.startswith(('avx512', 'amx')))}), "
          f"torch {torch.__version__}, threads {threads}; median ms of {args.repeats}")
    if kernels is not None:
        print(f"llama.cpp: {kernels}")
    decoding = decoding_kernels(engine)
    native = native_kernels(engine)
    print(f"decoding products (kernel at one row: count): {decoding}; attention, norms and rotations: {native or 'torch'}")
    cols = ("step", "products", "attn", "rest", "linear", "head", "attention", "adapter", "transformers",
            "llama_cpp") + (("eager_step", "compiled") if compiled is not None else ())
    cols += ("on_torch",) if native else ()
    if compiled is not None:
        print(f"compiled products ready {ready_s:.0f} s after the load began; `eager_step` and `compiled`: "
              "the step on today's kernels and on the compiled ones, taking turns")
    print(f"{'':>15} {'':>6} {'in the step':^20} {'alone':^27}")
    print(f"{'context':>7} {'rows':>7} " + " ".join(f"{c:>{width(c)}}" for c in cols) + f" {'x transf':>8} {'x cpp':>6}")
    for context, rows in results.items():
        for label, r in rows.items():
            cells = " ".join(f"{r[c]:>{width(c)}.1f}" if r.get(c) is not None else f"{'-':>{width(c)}}" for c in cols)
            ratio = f"{r['step'] / r['transformers']:>8.2f}" if r.get("transformers") else f"{'-':>8}"
            cpp = f"{r['step'] / r['llama_cpp']:>6.2f}" if r.get("llama_cpp") else f"{'-':>6}"
            fast = f" {r['compiled'] / r['eager_step']:>6.2f}x compiled" if r.get("compiled") else ""
            fast += f" {r['on_torch'] / r['step']:>6.2f}x on torch's attention, norms, rotations" if r.get("on_torch") else ""
            print(f"{context:>7} {label:>7} {cells} {ratio} {cpp}{fast}")
    print(json.dumps({"benchmark": "step", "model": engine.name, "dtype": args.dtype, "threads": threads,
                      "cpu": cpu, "llama_cpp_kernels": kernels, "decoding_kernels": decoding,
                      "native_kernels": native,
                      "sources": package_versions(),
                      "results": {c: {k: {m: (round(v, 2) if v is not None else None) for m, v in r.items()}
                                      for k, r in rows.items()} for c, rows in results.items()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
