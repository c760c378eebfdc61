"""Products with a GGUF file's own 4-bit and 8-bit blocks, on ONNX Runtime's CPU kernels.

A CPU decoding step is bound by reading weights: SmolLM2's 4-bit blocks are an eighth of its float32
weights. ONNX Runtime's `MatMulNBits` (com.microsoft contrib operator, MLAS kernels for AVX2 and others)
multiplies float rows by block-quantized weights directly, quantizing the rows to 8 bits per block of 32
as it goes (`accuracy_level` 4), as llama.cpp does with its Q8 activations. The blocks come from the GGUF
file as they are, so the weights are exactly the file's:
- Q4_0 (d, 32 nibbles; w = d (q - 8)): scale d, zero point 8;
- Q8_0 (d, 32 int8; w = d q): the codes shifted to unsigned, zero point 128;
- Q4_1 (d, m, 32 nibbles; w = d q + m): scale d, zero point 0, and the minimum's part of the product,
  sum over blocks of m times the block's sum of x, added by one small float32 product (MatMulNBits has no
  exact form for a minimum that is not a whole number of steps).
`BlockProduct` runs one fused weight (the q/k/v or gate/up rows stacked, as `FusedProjections` fuses
them); `engine.kernels.projections.FusedProjections` calls it for the `blocks` kernel (`engine.loading.quantize.attach_blocks`
gives it one), which `engine.loading.calibrate` picks
per row count where it is fastest. Without onnxruntime installed, or for other formats, the kernel is not
offered.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

BLOCK = 32
ACCURACY_INT8 = 4  # MatMulNBits accuracy_level: rows quantized to int8 per block


@dataclass(frozen=True)
class Blocks:
    """One weight's GGUF blocks: `kind` (Q4_0, Q4_1, Q8_0), `data` (rows, bytes per row) in the model's
    row order (q/k rows already put back in Hugging Face order)."""

    kind: str
    data: torch.Tensor


SUPPORTED = ("Q4_0", "Q4_1", "Q8_0")


def available() -> bool:
    """Whether ONNX Runtime and onnx are installed, found without importing them: importing onnx takes
    1.5 s (ml_dtypes), paid only by a model whose calibration picks the block kernel (`_build`)."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime"))


def fields(blocks: Blocks) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """(scales (N, kb) float32, minimums (N, kb) or None, codes (N, kb, 32) uint8 in element order)."""
    size = {"Q4_0": 18, "Q4_1": 20, "Q8_0": 34}[blocks.kind]
    raw = blocks.data.reshape(blocks.data.shape[0], -1, size)
    scale = raw[..., 0:2].contiguous().view(torch.float16).float().squeeze(-1)
    if blocks.kind == "Q8_0":
        codes = (raw[..., 2:].contiguous().view(torch.int8).to(torch.int16) + 128).to(torch.uint8)
        return scale, None, codes
    header = 4 if blocks.kind == "Q4_1" else 2
    nibbles = raw[..., header:]
    codes = torch.cat([nibbles & 15, nibbles >> 4], -1)
    low = raw[..., 2:4].contiguous().view(torch.float16).float().squeeze(-1) if blocks.kind == "Q4_1" else None
    return scale, low, codes


class BlockProduct:
    """x (rows, K) times the stacked weights `parts` (each (N_i, K) in GGUF blocks), transposed, in float32.
    The ONNX Runtime session (tens of milliseconds to build) is built at the first product, so a model
    whose calibration keeps other kernels never builds one."""

    def __init__(self, parts: Sequence[Blocks], threads: int) -> None:
        kinds = {p.kind for p in parts}
        if len(kinds) != 1 or next(iter(kinds)) not in SUPPORTED:
            raise ValueError(f"blocks of one supported kind expected, got {sorted(kinds)}")
        self.kind = kinds.pop()
        self.parts, self.threads = list(parts), threads
        self.n = sum(p.data.shape[0] for p in parts)
        self.k = parts[0].data.shape[1] // {"Q4_0": 18, "Q4_1": 20, "Q8_0": 34}[self.kind] * BLOCK
        self.mins: torch.Tensor | None = None
        self._session: Any = None  # an onnxruntime.InferenceSession (onnxruntime has no types)

    def _build(self) -> Any:
        found = [fields(p) for p in self.parts]
        scale, codes = torch.cat([f[0] for f in found]), torch.cat([f[2] for f in found])
        if self.kind == "Q4_1":
            self.mins = torch.cat([f[1] for f in found if f[1] is not None])
        self._session = _session(self.kind, codes, scale, self.n, self.k, self.threads)
        self.parts = []
        return self._session

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, self.k).contiguous()
        session = self._session or self._build()
        (y,) = session.run(None, {"A": rows.numpy()})
        out = torch.from_numpy(y)
        if self.mins is not None:
            out += F.linear(rows.view(rows.shape[0], -1, BLOCK).sum(-1), self.mins)
        return out.view(*x.shape[:-1], self.n)


def _session(kind: str, codes: torch.Tensor, scale: torch.Tensor, n: int, k: int, threads: int) -> Any:
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    bits = 8 if kind == "Q8_0" else 4
    blocks = k // BLOCK
    if bits == 4:
        packed = codes[..., 0::2] | (codes[..., 1::2] << 4)
        zero = 8 if kind == "Q4_0" else 0
        points = torch.full((n, (blocks + 1) // 2), zero | (zero << 4), dtype=torch.uint8)
    else:
        packed = codes
        points = torch.full((n, blocks), 128, dtype=torch.uint8)
    initializers = [numpy_helper.from_array(packed.contiguous().numpy(), "B"),
                    numpy_helper.from_array(scale.reshape(-1).contiguous().numpy(), "scales"),
                    numpy_helper.from_array(points.reshape(-1).numpy(), "zero_points")]
    node = helper.make_node("MatMulNBits", ["A", "B", "scales", "zero_points"], ["Y"], domain="com.microsoft",
                            K=k, N=n, bits=bits, block_size=BLOCK, accuracy_level=ACCURACY_INT8)
    graph = helper.make_graph([node], "product", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [None, k])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, n])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # ONNX Runtime's workers spin for a while after each run by default, taking the cores from the torch
    # products that follow in the same forward (measured: the next step's first products ran ~1.5x slower).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
