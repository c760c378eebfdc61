"""Oracles for the block-diffusion families, written from their primary sources (never copied):

- the network: transformers' implementation of each family's base architecture, loaded with the tiny
  checkpoint's weights (SDAR: Qwen3; Fast-dLLM v2: Qwen2; LLaDA2.x: Glm4Moe, which computes Ling-v2's
  block (QK-norm, partial RoPE, sigmoid group-limited router with expert bias, shared experts) under
  other names), run over the whole sequence with a 4D float block-causal mask;
- the samplers, at temperature 0 (argmax, and the probability of the argmax as confidence: LLaDA2.1's
  greedy branch), and with the mask token never proposed (the engine's loop never proposes it; a trained
  model gives it no mass): `block_generate` follows SDAR's `block_diffusion_generate` (JetAstra/SDAR
  generate.py, read at 59549b1) and LLaDA2's `generate` (inclusionAI/dFactory@92b6890
  models/llada2_moe/modeling_llada2_moe.py); `fast_dllm_generate` follows Fast-dLLM v2's `batch_sample`
  (NVlabs/Fast-dLLM v2/generation_functions.py, read in the copy at NikhilSDate/Fast-dLLM@734a60d; the
  checkpoint's own `generate` runs the same loop).
All of them decode whole blocks: the generation is padded with masks to the end of its last block, and
those masks take part in the block's steps like the others (SDAR and LLaDA2 commit them in confidence
order with the rest); what they decode is dropped. LLaDA2 runs `min(steps, gen_length)` steps per block
(`minimal_topk` 1). One quirk is left out: when a step's count exceeds the masks left in a block (a first
block holding few masks, with fewer steps than tokens in a block), SDAR's `torch.topk` also picks positions
that are not masks and overwrites them, prompt tokens included; here, as in LLaDA2's code, a step commits
at most the masks left. SDAR's published settings (a step per token) never reach it. And one bug: after a
prompt of exactly one block, Fast-dLLM v2's samplers prefill nothing (`if input_ids.shape[1] > block_size`)
yet run each block alone against that empty cache, so the prompt is never read; here, as the engine does,
such a prompt is read like a longer one and the next block's first token comes from its last row.
Both recompute the whole sequence every step; the official code caches complete blocks, which is exact
for a block-causal model, so the tokens are the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors.torch import load_file

Network = Callable[[list[int]], torch.Tensor]  # ids -> logits (L, V) under the block-causal mask


def block_mask(length: int, size: int) -> torch.Tensor:
    """(1, 1, L, L) additive float mask: position q sees k when k's block is not after q's."""
    block = torch.arange(length) // size
    allowed = block[None, :] <= block[:, None]
    return torch.zeros(length, length).masked_fill(~allowed, float("-inf"))[None, None]


def reference_model(folder: Path) -> torch.nn.Module:
    """transformers' model of the family's base architecture, holding the checkpoint's weights."""
    cfg = json.loads((folder / "config.json").read_text())
    weights = load_file(str(folder / "model.safetensors"))
    base = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures", "auto_map", "block_size",
                                                     "bd_size", "mask_token_id")}
    if cfg["model_type"] == "sdar":
        from transformers import Qwen3Config, Qwen3ForCausalLM

        model = Qwen3ForCausalLM(Qwen3Config(**base, attn_implementation="sdpa"))
    elif cfg["model_type"] == "Fast_dLLM_Qwen":
        from transformers import Qwen2Config, Qwen2ForCausalLM

        model = Qwen2ForCausalLM(Qwen2Config(**base, attn_implementation="sdpa"))
    else:
        model, weights = _glm4_moe(cfg, weights)
    missing, unexpected = model.load_state_dict(weights, strict=False)
    assert not unexpected and not missing, (missing, unexpected)
    return model.eval()


def _glm4_moe(cfg: dict, weights: dict[str, torch.Tensor]) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
    from transformers import Glm4MoeConfig, Glm4MoeForCausalLM

    config = Glm4MoeConfig(
        vocab_size=cfg["vocab_size"], hidden_size=cfg["hidden_size"], intermediate_size=cfg["intermediate_size"],
        moe_intermediate_size=cfg["moe_intermediate_size"], num_hidden_layers=cfg["num_hidden_layers"],
        num_attention_heads=cfg["num_attention_heads"], num_key_value_heads=cfg["num_key_value_heads"],
        head_dim=cfg["head_dim"], n_routed_experts=cfg["num_experts"], num_experts_per_tok=cfg["num_experts_per_tok"],
        n_shared_experts=cfg["num_shared_experts"], n_group=cfg["n_group"], topk_group=cfg["topk_group"],
        routed_scaling_factor=cfg["routed_scaling_factor"], first_k_dense_replace=cfg["first_k_dense_replace"],
        norm_topk_prob=True, use_qk_norm=True, attention_bias=False, rms_norm_eps=cfg["rms_norm_eps"],
        tie_word_embeddings=False, max_position_embeddings=cfg["max_position_embeddings"],
        rope_parameters={"rope_type": "default", "rope_theta": cfg["rope_theta"],
                         "partial_rotary_factor": cfg["partial_rotary_factor"]},
        attn_implementation="sdpa",
    )
    model = Glm4MoeForCausalLM(config)
    heads, kv, dim = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    mapped: dict[str, torch.Tensor] = {}
    for name, tensor in weights.items():
        name = name.replace("model.word_embeddings.", "model.embed_tokens.")
        if ".attention.query_key_value." in name:
            q, k, v = tensor.split([heads * dim, kv * dim, kv * dim])
            for part, value in (("q_proj", q), ("k_proj", k), ("v_proj", v)):
                mapped[name.replace("attention.query_key_value", f"self_attn.{part}")] = value
            continue
        name = (name.replace("attention.dense", "self_attn.o_proj")
                .replace("attention.query_layernorm", "self_attn.q_norm")
                .replace("attention.key_layernorm", "self_attn.k_norm")
                .replace("mlp.gate.expert_bias", "mlp.gate.e_score_correction_bias"))
        mapped[name] = tensor
    for layer in range(cfg["first_k_dense_replace"], cfg["num_hidden_layers"]):
        prefix = f"model.layers.{layer}.mlp.experts"
        experts = range(cfg["num_experts"])
        gate_up = [torch.cat([mapped.pop(f"{prefix}.{j}.gate_proj.weight"), mapped.pop(f"{prefix}.{j}.up_proj.weight")])
                   for j in experts]
        mapped[f"{prefix}.gate_up_proj"] = torch.stack(gate_up)
        mapped[f"{prefix}.down_proj"] = torch.stack([mapped.pop(f"{prefix}.{j}.down_proj.weight") for j in experts])
    return model, mapped


def network(model: torch.nn.Module, size: int) -> Network:
    def run(ids: list[int]) -> torch.Tensor:
        with torch.no_grad():
            x = torch.tensor([ids])
            positions = torch.arange(len(ids))[None]
            return model(input_ids=x, attention_mask=block_mask(len(ids), size), position_ids=positions).logits[0]

    return run


def _greedy(logits: torch.Tensor, mask_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    logits = logits.clone()
    logits[:, mask_id] = float("-inf")
    probs = logits.float().softmax(-1)
    conf, tokens = probs.max(-1)
    return tokens, conf


def transfer_counts(block: int, steps: int) -> list[int]:
    base, extra = divmod(block, steps)
    return [base + (i < extra) for i in range(steps)]


def block_generate(net: Network, prompt: list[int], gen_length: int, block: int, steps: int,
                   threshold: float | None, mask_id: int, stop_ids: set[int], within_length: bool = False) -> list[int]:
    """SDAR's static (threshold None) or dynamic, and LLaDA2's generate (`within_length`: at most
    `gen_length` steps per block): the generated ids up to and including the first stop id."""
    if within_length:
        steps = min(steps, gen_length)
    total = -(-(len(prompt) + gen_length) // block) * block
    x = prompt + [mask_id] * (total - len(prompt))
    counts = transfer_counts(block, steps)
    for b in range(len(prompt) // block, total // block):
        lo, hi = b * block, (b + 1) * block
        for step in range(steps):
            masks = torch.tensor([t == mask_id for t in x[lo:hi]])
            if not masks.any():
                break
            tokens, conf = _greedy(net(x[:hi])[lo:hi], mask_id)
            conf = torch.where(masks, conf, float("-inf"))
            high = conf > threshold if threshold is not None else torch.zeros_like(masks)
            if int(high.sum()) >= counts[step]:
                chosen = high
            else:
                chosen = torch.zeros_like(masks)
                chosen[conf.topk(min(counts[step], int(masks.sum()))).indices] = True
            for j in chosen.nonzero().flatten().tolist():
                x[lo + j] = int(tokens[j])
        if any(t in stop_ids for t in x[len(prompt) : hi]):
            break
    return _until_stop(x[len(prompt) : len(prompt) + gen_length], stop_ids)


def fast_dllm_generate(net: Network, prompt: list[int], max_new_tokens: int, block: int, small: int,
                       threshold: float, mask_id: int, stop_ids: set[int]) -> list[int]:
    """Fast-dLLM v2's sampler: a complete block's last logit writes the next block's first token (the
    prompt's too, when it is whole blocks); the rest of a block is denoised sub-block by sub-block,
    committing every mask above the threshold and always the most probable one. The generated ids up to
    and including the first stop id."""
    ids = list(prompt)
    if len(ids) % block == 0:
        ids.append(int(_greedy(net(ids)[-1:], mask_id)[0]))
    for _ in range(max_new_tokens // block):
        if any(t in stop_ids for t in ids[len(prompt) :]):
            break
        start = len(ids)
        x = ids + [mask_id] * (block - start % block)
        while not _stopped(x[start:], mask_id, stop_ids):
            if mask_id not in x[-block:]:
                x.append(int(_greedy(net(x)[-1:], mask_id)[0]))
                break
            for lo in range(0, block, small):
                while mask_id in x[len(x) - block + lo : len(x) - block + lo + small]:
                    if _stopped(x[start:], mask_id, stop_ids):
                        break
                    logits = net(x)[-block:]
                    logits = torch.cat([logits[:1], logits[:-1]])[lo : lo + small]
                    tokens, conf = _greedy(logits, mask_id)
                    base = len(x) - block + lo
                    masks = torch.tensor([t == mask_id for t in x[base : base + small]])
                    conf = torch.where(masks, conf, float("-inf"))
                    chosen = (conf > threshold) & masks
                    chosen[conf.argmax()] = True
                    for j in chosen.nonzero().flatten().tolist():
                        x[base + j] = int(tokens[j])
        ids = x
    return _until_stop(ids[len(prompt) :], stop_ids)


def _stopped(generated: list[int], mask_id: int, stop_ids: set[int]) -> bool:
    first = next((j for j, t in enumerate(generated) if t in stop_ids), None)
    return first is not None and mask_id not in generated[:first]


def _until_stop(ids: list[int], stop_ids: set[int]) -> list[int]:
    first = next((j for j, t in enumerate(ids) if t in stop_ids), None)
    return ids if first is None else ids[: first + 1]
