"""A model's inference weights as a load leaves them, kept on disk so that the next process maps them.

On a CPU the bundled model's load dequantizes the GGUF base (0.5 s on 2 threads), fuses each block's
projections with the adapter's down-projections (0.2 s) and makes the float16 copies the calibration chose
(0.5 s), in every process: a third of a cold `dcomplete infill`. What comes out depends only on the
checkpoint's files, the calibration and this code, so the first load writes it (fused float32 matrices, their
float16 copies, the rest of the state, and the calibration) to one safetensors file under the cache root,
and later loads map that file and hand its tensors to a model built on the meta device: the weights are
read once, by the page faults of the first forward.

Only products that run on the fused float32 matrix, its float16 or bfloat16 copies or torch's int4 form of
the checkpoint's 4-bit blocks (`engine.kernels.int4_product`) are kept; a load that attached blocks for ONNX
Runtime (`engine.kernels.block_products`) or int8 weights builds as before.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import torch

from engine.kernels.calibration import UNMEASURED, Calibration
from engine.kernels.calibration import VERSION as CALIBRATION_VERSION
from engine.kernels.int4_product import restored as restored_int4
from engine.loading.devices import engine_choice
from engine.loading.native_build import attention_forms, int4_forms, int4_library, int4_offered
from engine.models.transformer import Transformer

FORMAT = 1
KEEP = 2  # prepared files kept per cache folder (newest first): a changed adapter replaces the old ones


def path_for(sources: Sequence[Path | None]) -> Path:
    """The prepared file of a model built from `sources` (checkpoint files: path, size and mtime name them,
    as they do the modules that fuse the tensors) with the kernels calibration picks (the only load that
    keeps one), on this machine's CPU, threads and torch."""
    from engine.kernels import int4_product, int8_blocks, projections, row_attention, tile_int4
    from engine.loading.gguf_base import cache_root
    from engine.loading.tuning import machine_key
    from engine.models import anchored, layers

    code = [Path(m.__file__) for m in (projections, layers, anchored, int4_product, int8_blocks, tile_int4)
            if m.__file__]  # how tensors are made
    # the C kernels' sources too: the calibration kept in the file measured their speed
    files = [s for s in sources if s is not None] + [*code, tile_int4.SOURCE, tile_int4.AVX2_SOURCE, *row_attention.SOURCES, Path(__file__)]
    key = machine_key(os.environ.get("DCOMPLETE_CALIBRATION", ""), str(int4_offered()), str([form.name for form in int4_forms()]),
                      str([form.name for form in attention_forms()]),
                      str(CALIBRATION_VERSION), str(FORMAT), files=files)
    return cache_root() / "prepared" / f"{key[:32]}.safetensors"


def keepable(model: Transformer) -> bool:
    """Whether `model` (prepared) is all fused float32 and float16 tensors this module can restore: a
    product keeps its checkpoint blocks only when a kernel it runs is `blocks`."""
    return bool(model.products()) and all(p.blocks is None for p in model.products())


def save(path: Path, model: Transformer, calibration: Calibration) -> None:
    """Write `model`'s prepared tensors and `calibration` to `path` (atomically; a failure leaves no file)."""
    from safetensors.torch import save_file

    tensors: dict[str, torch.Tensor] = {}
    fused = set()
    for i, product in enumerate(model.products()):
        for name, tensor in product.prepared().items():
            tensors[f"product.{i}.{name}"] = tensor.contiguous()
        fused.add(product.storage())
    for name, tensor in model.state_dict().items():
        if tensor.untyped_storage().data_ptr() not in fused:
            tensors[f"state.{name}"] = tensor.contiguous()
    meta = {"format": str(FORMAT), "calibration": json.dumps(asdict(calibration))}
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale_temps(path.parent)
    temp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        save_file(tensors, str(temp), metadata=meta)
        temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)
    for old in sorted(path.parent.glob("*.safetensors"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP:]:
        old.unlink(missing_ok=True)


def sweep_stale_temps(folder: Path) -> None:
    """Remove the temp files of writers that died mid-way (their process is gone): a gigabyte each."""
    for temp in folder.glob("*.tmp"):
        pid = temp.suffixes[-2][1:] if len(temp.suffixes) >= 2 else ""
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            temp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


def restore(path: Path, build_meta: Callable[[], Transformer]) -> tuple[Transformer, Calibration]:
    """The model `build_meta()` builds on the meta device, fused as a load fuses it, with the tensors of
    `path`; raises ValueError when the file does not fill it."""
    from safetensors import SafetensorError, safe_open
    from safetensors.torch import load_file

    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
        if meta.get("format") != str(FORMAT):
            raise ValueError(f"{path}: not a prepared file of format {FORMAT}")
        tensors = load_file(str(path))
    except SafetensorError as exc:
        raise ValueError(f"{path}: {exc}") from None
    calibration = Calibration.from_json(json.loads(meta["calibration"]))
    model = build_meta()
    model.eval()
    model.fuse_for_inference()
    tiles = int4_library() if any(".int4.tiles" in k for k in tensors) else None
    for i, product in enumerate(model.products()):
        prefix = f"product.{i}.int4."
        four_bit = {k.removeprefix(prefix): v for k, v in tensors.items() if k.startswith(prefix)}
        if four_bit:
            product.int4 = restored_int4(four_bit, tiles)
            if product.int4 is None:
                raise ValueError(f"{path}: its block products need dcomplete's int4 kernel, which did not load")
    calibration.apply(model.products(), half=True)
    state = {k.removeprefix("state."): v for k, v in tensors.items() if k.startswith("state.")}
    model.load_state_dict(state, strict=False, assign=True)
    for i, product in enumerate(model.products()):
        prefix = f"product.{i}."
        product.restore({k.removeprefix(prefix): v for k, v in tensors.items() if k.startswith(prefix)})
    if getattr(model.shape, "tie_word_embeddings", False):
        model.model.embed_tokens.weight = model.lm_head.weight
    for p in model.parameters():
        p.requires_grad_(False)
    if any(t.is_meta for t in (*model.parameters(), *model.buffers())):
        raise ValueError(f"{path}: does not hold every tensor of the model")
    return model, calibration


def load_path(device: torch.device, dtype: str | None, sources: list[Path | None]) -> Path | None:
    """Where a load's prepared weights are kept: CPU loads of the engine's choice of kernels, else None."""
    if device.type != "cpu" or not engine_choice(dtype):
        return None
    return path_for(sources)


def restored(path: Path | None, build_meta: Callable[[], Transformer]) -> tuple[Transformer, Calibration] | None:
    """The model from its prepared file, or None (no file, or one this code cannot use: it is removed, and
    the load builds the model and writes the file again)."""
    if path is None or not path.exists():
        return None
    try:
        return restore(path, build_meta)
    except (OSError, ValueError, KeyError, RuntimeError):
        path.unlink(missing_ok=True)
        return None


def keep(path: Path | None, model: Transformer, calibration: Calibration) -> threading.Thread | None:
    """Keep the prepared weights of a model worth it (calibrated: big enough to gain from float16), written
    by a thread of their own (a gigabyte for the bundled model: seconds the model need not wait for; the
    weights are only read meanwhile). The process waits for it before it exits."""
    if path is None or calibration == UNMEASURED or not keepable(model):
        return None

    def write() -> None:
        try:
            save(path, model, calibration)
        except OSError:
            pass  # a read-only or full cache costs the next load its time, nothing else

    writer = threading.Thread(target=write, name="dcomplete-prepared-weights")
    writer.start()
    _writers.append(writer)
    return writer


_writers: list[threading.Thread] = []


def written() -> None:
    """Wait until every prepared file this process started writing is written (or failed)."""
    while _writers:
        _writers.pop().join()
