"""Which family a checkpoint is, and the parts each family plugs into the one loop: its predictor (what a step
runs through the model and caches), its commit policy (which masks a step writes), its loader, and the block
layout of the block-diffusion families. `registry` holds the table and `load`."""
