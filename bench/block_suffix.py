"""Where should a block-causal model read the text after the gap? Measured on a real causal model.

    python -m bench.block_suffix [--limit 60] [--benchmarks single,santacoder] [--seed 0]

A block-diffusion checkpoint cannot attend to text after the gap (`engine/families/block_layout.py`). No trained
block-diffusion checkpoint fits this machine, but a block-diffusion model with blocks of one token is an
autoregressive model, and the bundled SmolLM2-135M base is a real one: written as a Fast-dLLM v2
checkpoint (Qwen2 layout with zero q/k/v biases, `bd_size` 1), the block family's engine decodes it
greedily, token by token, exactly as the base would. Each row runs the same HumanEval-infilling /
SantaCoder-FIM tasks through the infill API (`bench.quality.model_completer`, own length) with the
family reading
  prefix   only the text before the gap (the suffix is not read at all), or
  context  the text after the gap first, as a context block ending with EOS, then BOS and the prefix.
Rows end with one JSON line. The comparison speaks for how a causal model uses a suffix placed before
its prefix; a block-diffusion checkpoint with its own training is not measured by it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.quality import evaluate_row, format_table, load_suite, model_completer, sampler_params

MODES = {"prefix": False, "context": True}


def causal_block_checkpoint(folder: Path) -> Path:
    """The bundled model's GGUF base as a Fast-dLLM v2 checkpoint with blocks of one token."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoTokenizer

    from engine.loading.folders import DEFAULT_MODEL_DIR
    from engine.loading.gguf_base import base_folder, read_shape, read_state
    from engine.models.fast_dllm import MASK_TOKEN

    base = base_folder(json.loads((DEFAULT_MODEL_DIR / "config.json").read_text())["base"])
    shape = read_shape(base)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    tokenizer.add_special_tokens({"additional_special_tokens": [MASK_TOKEN]})  # one past the base vocabulary
    anchored = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text())
    tokenizer.bos_token = tokenizer.eos_token = tokenizer.convert_ids_to_tokens(anchored["eos_token_id"])
    weights = read_state(base)  # dequantized from the GGUF (the cache folder holds no weights)
    embed = weights["model.embed_tokens.weight"]
    weights["model.embed_tokens.weight"] = torch.cat([embed, embed.mean(0, keepdim=True)])
    kv = shape.num_key_value_heads * (shape.hidden_size // shape.num_attention_heads)
    for i in range(shape.num_hidden_layers):
        for name, width in (("q_proj", shape.hidden_size), ("k_proj", kv), ("v_proj", kv)):
            weights[f"model.layers.{i}.self_attn.{name}.bias"] = torch.zeros(width, dtype=embed.dtype)
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in weights.items()}, str(folder / "model.safetensors"))
    config = {**{k: v for k, v in shape.__dict__.items() if k != "qkv_bias"}, "vocab_size": len(tokenizer),
              "model_type": "Fast_dLLM_Qwen", "architectures": ["Fast_dLLM_QwenForCausalLM"], "bd_size": 1,
              "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
              "pad_token_id": tokenizer.eos_token_id}
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    tokenizer.save_pretrained(str(folder))
    return folder


def reading(engine: Any, reads_suffix: bool) -> Any:
    """The same loaded model with its family reading the suffix or not."""
    from engine import Engine
    from engine.families.registry import reading_suffix

    return Engine(dataclasses.replace(engine.loaded, family=reading_suffix(engine.loaded.family, reads_suffix)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.block_suffix", description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=60, help="seeded subset of N tasks per benchmark")
    parser.add_argument("--benchmarks", default="single,santacoder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    from engine import Engine

    benchmarks = args.benchmarks.split(",")
    suite = load_suite(args.limit, args.seed, benchmarks)
    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine.load(str(causal_block_checkpoint(Path(tmp) / "smollm2-block1")))
    params = sampler_params("fast", args.seed)  # blocks of one token: greedy, one token a step, cached exactly
    rows = {}
    for mode, reads_suffix in MODES.items():
        complete = model_completer(reading(engine, reads_suffix), params, "own")
        rows[f"block1/{mode}"] = evaluate_row(f"block1/{mode}", complete, suite, args.workers, benchmarks)
    print(format_table(rows, suite.sizes))
    print(json.dumps({"model": "SmolLM2-135M base as Fast-dLLM v2, bd_size 1", "n": suite.sizes,
                      "seed": args.seed, "rows": rows}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
