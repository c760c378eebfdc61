"""Turning a model spec into a ready model: the bundled default, a local folder, or a Hugging Face repo id."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from engine.allocator import keep_freed_memory
from engine.calibration import UNMEASURED, Calibration, calibration_for
from engine.checkpoint import CheckpointError, load_weights, read_json, weight_files
from engine.drafting import DraftPolicy
from engine.models.projections import BLOCKS, INT4
from engine.models.registry import Family, family_of
from engine.models.transformer import Transformer, on_meta

if TYPE_CHECKING:
    from engine.block_products import Blocks

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "default_model"
DEFAULT_SPECS = ("default", "bundled", "")
HUB_FILES = [
    "config.json",
    "generation_config.json",
    "*.safetensors",
    "model.safetensors.index.json",
    "tokenizer*",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
]
# Full-attention dLLMs recompute the whole canvas; their long-context configs (131072 for Dream) are
# inherited from the AR base, not what they were trained on, so the usable context is capped.
CONTEXT_CAP = 4096


class ModelLoadError(ValueError):
    """A model spec that cannot be loaded; the message names the spec and the reason."""


@dataclass(frozen=True)
class SpecialTokens:
    mask_id: int
    eos_id: int
    pad_id: int
    bos_id: int

    @property
    def end_ids(self) -> frozenset[int]:
        """Ids that end a span: the model fills unused mask slots with them."""
        return frozenset({self.eos_id, self.pad_id})


@dataclass
class LoadedModel:
    """`calibration`: what this machine runs fastest for the model (`engine.calibration`), applied."""

    folder: Path
    family: Family
    model: Transformer
    tokenizer: Any
    special: SpecialTokens
    max_length: int
    device: torch.device
    dtype: torch.dtype
    calibration: Calibration = UNMEASURED
    drafting: DraftPolicy = field(init=False)

    def __post_init__(self) -> None:
        self.drafting = DraftPolicy(self.calibration.row_cost, max(1, self.family.lookahead))


def resolve_folder(spec: str | os.PathLike[str]) -> Path:
    text = str(spec)
    if text in DEFAULT_SPECS:
        if not (DEFAULT_MODEL_DIR / "config.json").exists():
            raise ModelLoadError(f"the bundled default model is not installed (expected {DEFAULT_MODEL_DIR})")
        return DEFAULT_MODEL_DIR
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelLoadError(f"model {text}: not a folder (give a Hugging Face model folder or repo id)")
        return path
    if text.count("/") == 1 and not text.startswith((".", "/", "~")):
        return _from_hub(text)
    raise ModelLoadError(f"model {text}: no such folder, and not a Hugging Face repo id (owner/name)")


def _from_hub(repo_id: str) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id, allow_patterns=HUB_FILES))
    except LocalEntryNotFoundError:
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        why = "HF_HUB_OFFLINE is set" if offline else "the hub cannot be reached"
        raise ModelLoadError(f"model {repo_id}: not in the local Hugging Face cache and {why}") from None
    except (HfHubHTTPError, OSError) as exc:
        raise ModelLoadError(f"model {repo_id}: download failed ({exc.__class__.__name__}: {exc})") from None


def pick_device(device: str | None) -> torch.device:
    if device in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ModelLoadError(f"device {device!r}: not a torch device (use cpu, cuda, cuda:N or auto)") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ModelLoadError(f"device {device!r}: CUDA is not available on this machine")
    return dev


INT8 = "int8"


def pick_dtype(dtype: str | None, device: torch.device) -> torch.dtype:
    """The compute dtype; "int8" (CPU only) computes in float32 with int8 linear weights (engine/quantize.py)."""
    if dtype in (None, "", "auto"):
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    table = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16,
             "bf16": torch.bfloat16, "float16": torch.float16, "fp16": torch.float16, INT8: torch.float32}
    if dtype not in table:
        raise ModelLoadError(f"dtype {dtype!r}: use one of {', '.join(table)}")
    if dtype == INT8 and device.type != "cpu":
        raise ModelLoadError(f"dtype {dtype!r}: int8 weights are for the CPU (device {device})")
    return table[dtype]


def special_tokens(cfg: dict[str, Any], tokenizer: Any, folder: Path) -> SpecialTokens:
    """Ids from config.json first, then the tokenizer; never from generation_config.json, whose
    mask_token_id is null in Dream's release (research/models.md §2.1)."""

    def first(*values: Any) -> int | None:
        for v in values:
            if isinstance(v, list):
                v = v[0] if v else None
            if v is not None:
                return int(v)
        return None

    mask = first(cfg.get("mask_token_id"), getattr(tokenizer, "mask_token_id", None))
    eos = first(cfg.get("eos_token_id"), getattr(tokenizer, "eos_token_id", None))
    if mask is None or eos is None:
        which = "mask" if mask is None else "EOS"
        raise ModelLoadError(f"model {folder}: no {which} token id in config.json or the tokenizer")
    pad = first(cfg.get("pad_token_id"), getattr(tokenizer, "pad_token_id", None), eos)
    bos = first(getattr(tokenizer, "bos_token_id", None), cfg.get("bos_token_id"), eos)
    assert pad is not None and bos is not None
    if pad == mask:
        raise ModelLoadError(f"model {folder}: pad and mask token ids are both {mask}")
    return SpecialTokens(mask_id=mask, eos_id=eos, pad_id=pad, bos_id=bos)


def load(spec: str | os.PathLike[str] = "default", device: str | None = None, dtype: str | None = None) -> LoadedModel:
    folder = resolve_folder(spec)
    try:
        cfg = read_json(folder / "config.json")
        family = family_of(cfg)
        files = weight_files(folder) if family.shape is not None else []
    except (CheckpointError, ValueError) as exc:
        raise ModelLoadError(f"model {spec}: {exc}") from None
    tokenizer = None
    if family.shape is not None:
        tokenizer = _load_tokenizer(spec, folder)
    dev = pick_device(device)
    dt = pick_dtype(dtype, dev)
    if dev.type == "cpu":
        keep_freed_memory()
    if family.load is not None:
        loaded: LoadedModel = family.load(spec, folder, cfg, family, dev, dt)
        return loaded
    if family.shape is None:
        return _load_anchored(spec, folder, cfg, family, dev, dt, dtype)
    shape = family.shape(cfg)
    model = on_meta(lambda: family.model_class(shape))
    try:
        load_weights(model, files, family.rename, dev, dt)
    except CheckpointError as exc:
        raise ModelLoadError(f"model {spec}: {exc}") from None
    calibration = _prepare(model, dtype, dev)
    max_length = min(int(shape.max_position_embeddings), CONTEXT_CAP)
    special = special_tokens(family.token_config(cfg, tokenizer), tokenizer, folder)
    return LoadedModel(folder, family, model, tokenizer, special, max_length, dev, dt, calibration)


def _load_tokenizer(spec: str | os.PathLike[str], folder: Path) -> Any:
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    # set_verbosity_error, but it is unannotated: AutoTokenizer warns about model types it does not know (Dream)
    hf_logging.set_verbosity(logging.ERROR)
    try:
        return AutoTokenizer.from_pretrained(str(folder), trust_remote_code=False)
    except Exception as exc:  # transformers raises many unrelated types for a broken tokenizer
        raise ModelLoadError(f"model {spec}: cannot load its tokenizer {_tokenizer_file(folder)} "
                             f"({_one_line(exc)})") from None


def _blocks(base: Path, device: torch.device, dtype: str | None) -> dict[str, Blocks] | None:
    """The GGUF base's own 4- and 8-bit blocks, when a kernel can run them here (`engine.block_products`,
    `engine.int4_product`)."""
    from engine import block_products, int4_product

    if (device.type != "cpu" or dtype not in (None, "", "auto")
            or not (block_products.available() or int4_product.enabled())):
        return None
    from engine.gguf_base import read_blocks

    return read_blocks(base, block_products.SUPPORTED)


def _fast_tokenizer(spec: str | os.PathLike[str], folder: Path) -> Any:
    """The converted base's tokenizer without importing transformers (`engine.tokenizer`)."""
    from engine.tokenizer import FastTokenizer

    try:
        return FastTokenizer(folder)
    except Exception as exc:  # the tokenizers library raises its own exception types for a broken file
        raise ModelLoadError(f"model {spec}: cannot load its tokenizer {_tokenizer_file(folder)} "
                             f"({_one_line(exc)})") from None


def _tokenizer_file(folder: Path) -> Path:
    """The file a broken tokenizer most likely comes from: tokenizer.json when there is one."""
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json"):
        if (folder / name).exists():
            return folder / name
    return folder


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{exc.__class__.__name__}: {text[0]}" if text else exc.__class__.__name__


def _prepare(model: Transformer, dtype: str | None, device: torch.device,
             blocks: dict[str, Blocks] | None = None) -> Calibration:
    """Fuse for inference and pick the kernels: float16 copies, and the checkpoint's own `blocks` when it
    has them, only when no dtype was asked for (they do not keep float32 results)."""
    model.eval()
    model.fuse_for_inference()
    if dtype == INT8:
        from engine.quantize import quantize_int8

        quantize_int8(model)
        return UNMEASURED
    if blocks and device.type == "cpu" and dtype in (None, "", "auto"):
        from engine import block_products, int4_product

        if block_products.available():
            block_products.attach_blocks(model, blocks)
        if int4_product.enabled():
            int4_product.attach_int4(model, blocks)
    calibration = calibration_for(model, device)
    calibration.apply(model, half=dtype in (None, "", "auto"))
    for product in model.products():  # blocks no call runs: their memory and their runtime sessions go
        if BLOCKS not in (*product.kernels, *product.mixed, product.wide):
            product.blocks = None
        if INT4 not in (*product.kernels, *product.mixed, product.wide):
            product.int4 = None
    return calibration


def _prepared_path(device: torch.device, dtype: str | None, sources: list[Path | None]) -> Path | None:
    """Where this load's prepared weights are kept (`engine.prepared`): CPU loads of the engine's choice."""
    if device.type != "cpu" or dtype not in (None, "", "auto"):
        return None
    from engine.prepared import path_for

    return path_for(sources)


def _restore(path: Path | None, build_meta: Callable[[], Transformer]) -> tuple[Transformer, Calibration] | None:
    """The model from its prepared file, or None (no file, or one this code cannot use: rebuilt)."""
    if path is None or not path.exists():
        return None
    from engine.prepared import restore

    try:
        return restore(path, build_meta)
    except (OSError, ValueError, KeyError, RuntimeError):
        path.unlink(missing_ok=True)
        return None


def _keep(path: Path | None, model: Transformer, calibration: Calibration) -> None:
    """Keep the prepared weights of a model worth it (calibrated: big enough to gain from float16)."""
    from engine.prepared import keepable, save

    if path is None or calibration == UNMEASURED or not keepable(model):
        return
    try:
        save(path, model, calibration)
    except OSError:
        pass  # a read-only or full cache costs the next load its time, nothing else


def _load_anchored(spec: str | os.PathLike[str], folder: Path, cfg: dict[str, Any], family: Family, dev: torch.device,
                   dt: torch.dtype, dtype: str | None) -> LoadedModel:
    """A GGUF base (`cfg["base"]`) plus the folder's adapter; the tokenizer comes with the base."""

    from engine.anchored_load import ADAPTER_FILE, adapter_shape, build_anchored, meta_anchored
    from engine.gguf_base import GGUFError, base_folder

    adapter = folder / ADAPTER_FILE
    try:
        base = base_folder(str(cfg["base"]))
        shape = adapter_shape(cfg)
        kept = _prepared_path(dev, dtype, [folder / "config.json", base / "config.json",
                                           adapter if adapter.exists() else None])
        restored = _restore(kept, lambda: meta_anchored(base, shape))
        if restored is None:
            model, base = build_anchored(str(cfg["base"]), shape, dev, dt, adapter)
    except (GGUFError, CheckpointError) as exc:
        raise ModelLoadError(f"model {spec}: {exc}") from None
    except KeyError as exc:
        raise ModelLoadError(f"model {spec}: config.json has no {exc}") from None
    tokenizer = _fast_tokenizer(spec, base)
    if restored is not None:
        model, calibration = restored  # type: ignore[assignment]
    else:
        calibration = _prepare(model, dtype, dev, _blocks(base, dev, dtype))
        _keep(kept, model, calibration)
    max_length = min(int(cfg.get("context", cfg.get("max_position_embeddings", 4096))), CONTEXT_CAP)
    eos = int(cfg.get("eos_token_id", 0))
    special = SpecialTokens(mask_id=model.mask_id, eos_id=eos, pad_id=int(cfg.get("pad_token_id", eos)),
                            bos_id=int(cfg.get("bos_token_id", eos)))
    return LoadedModel(folder, family, model, tokenizer, special, max_length, dev, dt, calibration)
