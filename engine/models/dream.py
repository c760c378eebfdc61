"""Dream family: Dream-v0, Dream-Coder-v0, DiffuCoder, DreamOn, Open-dCoder and our bundled model.

Qwen2 layout (q/k/v biases, GQA, RoPE, RMSNorm) run bidirectionally, with *shifted* logits: the logit
at position i predicts token i+1 (the families were adapted from autoregressive checkpoints), so a real
token must precede the first mask. Checkpoint parameter names are the Qwen2 ones, loaded as they are.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from engine.models.transformer import ModelShape, Transformer

LOGITS_SHIFTED = True


@dataclass(frozen=True)
class DreamConfig(ModelShape):
    mask_token_id: int | None = None
    bos_token_id: int | None = None
    eos_token_id: int | None = None
    pad_token_id: int | None = None

    @classmethod
    def from_hf(cls, cfg: dict[str, Any]) -> DreamConfig:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in cfg.items() if k in names}
        values.setdefault("num_key_value_heads", cfg["num_attention_heads"])
        for key in ("eos_token_id", "bos_token_id", "pad_token_id"):
            if isinstance(values.get(key), list):
                values[key] = values[key][0]
        return cls(**values)

    def to_hf(self) -> dict[str, Any]:
        cfg = asdict(self)
        for key in ("qkv_bias", "head_dim", "qk_norm", "partial_rotary_factor"):
            cfg.pop(key)
        cfg.update(model_type="Dream", architectures=["DreamModel"], hidden_act="silu", torch_dtype="float32")
        return cfg


class DreamModel(Transformer):
    def __init__(self, config: DreamConfig) -> None:
        super().__init__(config)
        self.config = config


def rename(name: str) -> str:
    return name
