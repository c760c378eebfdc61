"""The build of a model's compiled int8 products, in a process of its own at the lowest priority.

    python -m engine.loading.compile_build FOLDER

FOLDER (`engine.loading.compiled`) holds the int8 weights; every product is compiled into inductor's cache
in FOLDER/inductor, checked (`compiled.check`: row invariance, and the eager int8 product), and, when all
are, the manifest is written last (atomically), which is what tells the engine the build is done. It runs
at the thread count the engine runs at (inductor's code depends on it). Exit 1 with one line on stderr when
a product does not compile or check.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import torch


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not (Path(args[0]) / "weights.safetensors").is_file():
        print("usage: python -m engine.loading.compile_build FOLDER (holding weights.safetensors)", file=sys.stderr)
        return 2
    os.nice(19)
    from engine.kernels.compiled_int8 import compile_product, inductor_settings
    from engine.loading import compiled

    folder = Path(args[0])
    weights = compiled.read_weights(folder)
    threads = int(os.environ.get("DCOMPLETE_COMPILED_THREADS", "0")) or torch.get_num_threads()
    torch.set_num_threads(threads)
    started = time.perf_counter()
    for i, weight in enumerate(weights):
        with inductor_settings(folder / compiled.INDUCTOR):
            product = compile_product(weight)
        wrong = compiled.check(weight, product)
        if wrong is not None:
            print(f"product {i} ({tuple(weight.codes.shape)}): {wrong}", file=sys.stderr)
            return 1
        print(f"product {i} {tuple(weight.codes.shape)}: {time.perf_counter() - started:.1f} s", flush=True)
    temp = folder / f"{compiled.MANIFEST}.tmp"
    temp.write_text(json.dumps(compiled.manifest(compiled.digest(weights), len(weights))))
    temp.replace(folder / compiled.MANIFEST)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
