"""A model spec to a built model: folders and the hub, safetensors and GGUF files, the tokenizer, the kernels
swapped in and calibrated for this machine, prepared weights kept on disk. Names no family: a family's row
(`engine.families.registry`) says which loader builds it."""
