"""The one denoising loop (`loop`), its state (`state`, `rows`), the seam a family plugs into (`seam`: the
Predictor and CommitPolicy protocols, the Family and LoadedModel records), the canvas batch, and the sampling
and drafting policies every family shares."""
