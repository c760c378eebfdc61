"""`WeightKey`: the digest of a frozen weight in inductor's FX graph cache key (`engine.kernels.compiled_int8`).

Its own module because it subclasses inductor's pass type, whose import costs a second and a half: only a
compile imports it."""

from __future__ import annotations

import hashlib

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass


class WeightKey(CustomGraphPass):
    """A post-grad pass that changes nothing and whose uuid, the tensors' digest, enters inductor's FX graph
    cache key (which otherwise holds a frozen weight's shape alone)."""

    def __init__(self, *tensors: torch.Tensor) -> None:
        digest = hashlib.sha256()
        for t in tensors:
            digest.update(t.contiguous().view(torch.uint8).numpy().tobytes())
        self.key = digest.hexdigest()

    def __call__(self, graph: torch.fx.graph.Graph) -> None:
        pass

    def uuid(self) -> str:
        return self.key
