"""The `compiled` kernel: a decoding product on int8 weights, compiled by inductor into its AMX micro-kernel.

`F.linear(x, codes.to(bfloat16)) * scales` (int8 codes, one bfloat16 scale per output row), compiled with
freezing and max-autotune on inductor's C++ GEMM template, is rewritten by inductor's post-grad passes into
its int8 weight-only product, which the template runs on the AMX micro-kernel (measured on the 2-core Xeon
with AVX-512 and AMX, torch 2.13, one thread: a decoding step's products in 0.58x the packed bfloat16 copy's
time at every row count from 1 to 16; bench.compiled_products). Compiled for any row count (the row count a
symbolic size), the kernel keeps a row's bits whatever rows run beside it, which the engine requires of every
decoding kernel; compiled for fixed row counts it picks another micro-kernel below 5 rows and does not.

Compiling is slow (about 60 s for the bundled model's 121 products, cold), so it never runs on the engine's
thread: `engine.loading.compiled` builds the products in a subprocess, which leaves them in inductor's cache,
and the engine's thread loads them from there (`compile_product` with `cached_only`: a cache miss raises
`NotCached` instead of compiling) when it is idle.

Inductor's FX graph cache keys a frozen weight by its shape alone, and would hand every product of a shape
the weight packed for the first one; `WeightKey` adds the weight's digest to the key.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

COMPILE_ROWS = 2  # the example's row count: any but 0 and 1, which inductor specializes on


@dataclass(frozen=True)
class Int8Weight:
    """A weight (N, K) as int8 codes with one bfloat16 scale per output row (the row's max abs over 127)."""

    codes: torch.Tensor
    scales: torch.Tensor

    @classmethod
    def of(cls, weight: torch.Tensor) -> Int8Weight:
        w = weight.detach().float()
        scale = (w.abs().amax(1) / 127).clamp(min=1e-12)
        codes = (w / scale[:, None]).round().clamp(-127, 127).to(torch.int8).contiguous()
        return cls(codes, scale.to(torch.bfloat16).contiguous())

    def reference(self, x: torch.Tensor) -> torch.Tensor:
        """The product in eager float32 on the rows rounded to bfloat16, as the compiled kernel computes it
        (up to its output's rounding to bfloat16)."""
        rows = x.reshape(-1, x.shape[-1]).to(torch.bfloat16).float()
        y = F.linear(rows, self.codes.float()) * self.scales.float()
        return y.view(*x.shape[:-1], -1)


class Int8Pattern(nn.Module):
    """The form inductor's freezing passes rewrite into its int8 weight-only product."""

    def __init__(self, weight: Int8Weight) -> None:
        super().__init__()
        self.register_buffer("codes", weight.codes)
        self.register_buffer("scales", weight.scales)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        codes, scales = self.codes, self.scales
        assert isinstance(codes, torch.Tensor) and isinstance(scales, torch.Tensor)
        return (F.linear(x.to(torch.bfloat16), codes.to(torch.bfloat16)) * scales).float()


def warm_ups() -> list[Callable[[], object]]:
    """What inductor does once per process before its first product loads, as pieces that each run alone
    (about 3 s together on the 2-core Xeon, 2 s of them importing): its modules, the vector ISA probe (it
    compiles test programs), the pattern tables of its graph passes, the hash of torch's own code."""

    def imports() -> None:
        import torch._dynamo
        import torch._inductor.compile_fx  # noqa: F401

    def isa() -> object:
        from torch._inductor.cpu_vec_isa import pick_vec_isa

        return pick_vec_isa()

    def patterns() -> None:
        from torch._inductor.fx_passes.joint_graph import lazy_init

        lazy_init()

    def code_hash() -> object:
        from torch._inductor.codecache import torch_key

        return torch_key()

    return [imports, isa, patterns, code_hash]


class NotCached(RuntimeError):
    """A product asked for from inductor's cache alone was not there."""


@contextlib.contextmanager
def inductor_settings(cache: Path, cached_only: bool = False) -> Iterator[None]:
    """Inductor configured as every compile of this kernel needs it (a load must use the settings of the
    build: they are part of the cache key), its cache in `cache`; `cached_only`: a miss raises `NotCached`
    where inductor would compile."""
    import torch._dynamo.config as dynamo_config
    import torch._inductor.compile_fx as compile_fx
    import torch._inductor.config as inductor_config

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotCached("not in inductor's cache")

    before = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    patches = contextlib.ExitStack()
    try:
        with patches:
            patches.enter_context(inductor_config.patch(
                freezing=True, max_autotune=True, max_autotune_gemm_backends="CPP", fx_graph_cache=True,
                autotune_in_subproc=False))
            patches.enter_context(dynamo_config.patch(recompile_limit=1 << 20, accumulated_recompile_limit=1 << 20))
            if cached_only:
                saved = compile_fx.fx_codegen_and_compile
                compile_fx.fx_codegen_and_compile = refuse
                patches.callback(setattr, compile_fx, "fx_codegen_and_compile", saved)
            yield
    finally:
        if before is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = before


def compile_product(weight: Int8Weight) -> Callable[[torch.Tensor], torch.Tensor]:
    """Inductor's compiled product by `weight` for any row count: x (1, rows, K) float32 in, (1, rows, N)
    float32 out, called without dynamo's guards (which cost ~0.3 ms a call at 30 compiled modules). Runs
    under `inductor_settings`."""
    import torch._inductor.config as inductor_config
    from torch._inductor.compile_fx import compile_fx

    from engine.kernels.weight_key import WeightKey

    box: dict[str, Any] = {}

    def backend(gm: torch.fx.GraphModule, example: list[Any]) -> Callable[..., Any]:
        box["fn"], box["symbolic"] = compile_fx(gm, example), [not isinstance(e, torch.Tensor) for e in example]
        return box["fn"]  # type: ignore[no-any-return]

    x = torch.zeros(1, COMPILE_ROWS, weight.codes.shape[1])
    torch._dynamo.mark_dynamic(x, 1)
    module = Int8Pattern(weight).eval()
    with torch.inference_mode(), inductor_config.patch(post_grad_custom_post_pass=WeightKey(
            weight.codes, weight.scales)):
        torch.compile(module, backend=backend, fullgraph=True, dynamic=None)(x)
    if "fn" not in box:
        raise RuntimeError("inductor returned no compiled product")
    fn, symbolic = box["fn"], box["symbolic"]

    def call(x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = fn(*[x.shape[1] if sym else x for sym in symbolic])[0]
        return out

    return call
