"""The dtype the anchored family's K/V cache keeps keys and values in.

A decoding step's attention reads every cached key and value of its row (after 1,024 tokens, 30 layers of
SmolLM2: 55 MB in float32), and on a CPU the matrix library's small-row float32 products read them at a
fraction of the memory's speed: on the Zen 4 EPYC (2 threads, 1,185 keys a layer) the two products of a
one-row step took 3.8 + 2.3 ms over float32 keys and values against 1.2 + 1.2 ms over bfloat16 ones. So on a
CPU whose cores multiply bfloat16 natively (AVX-512 BF16, or AMX), a model computing in float32 whose load
left the kernels to the engine (no dtype asked for: `LoadedModel.kv_dtype`) stores its cache in bfloat16
and attends in it: scores come out of the product in bfloat16, the mask and softmax run in float32, and a
decoding step's rows keep their bits alone or together as before (`models.layers.decoding_attention`).
Elsewhere (AVX2 only, where bfloat16 products are emulated, and GPUs, whose models compute in the cache's
dtype already), the compute dtype. `DCOMPLETE_KV=float32` keeps the compute dtype on every CPU;
`DCOMPLETE_KV=bfloat16` stores bfloat16 on every CPU (slower where it is emulated: for tests).
"""

from __future__ import annotations

import functools
import os

import torch

ENV = "DCOMPLETE_KV"


@functools.cache
def _native_bfloat16() -> bool:
    cpu = torch.cpu
    return any(bool(getattr(cpu, probe, lambda: False)()) for probe in ("_is_avx512_bf16_supported",
                                                                        "_is_amx_tile_supported"))


def kv_dtype(device: torch.device, dtype: torch.dtype) -> torch.dtype:
    """The dtype of a cache for a model computing in `dtype` on `device` (see the module's docstring)."""
    asked = os.environ.get(ENV, "")
    if device.type != "cpu" or dtype != torch.float32 or asked == "float32":
        return dtype
    return torch.bfloat16 if asked == "bfloat16" or _native_bfloat16() else dtype

