"""How one linear product runs: the fused projections and their kernels (float32, reduced-precision copies,
a GGUF file's own blocks on ONNX Runtime or torch's int4 kernel, int8 weights), and the calibration record
that says which one a call of so many rows takes. Knows nothing of models: `engine.loading` puts kernels into
a built model."""
