"""Documents' cached keys and values kept on disk across restarts (`Engine.load(keep_documents=True)`: the
language server).

A server started again opens the files it served before; the first suggestion in each would prefill its
whole window (about 1 s for 1,024 tokens on a 2-core CPU, a third of a cached start). The engine writes a
document's `DocKV` here the first time it keeps one in a process and again when the document is closed,
and reads it back when a document it has nothing for in memory asks, so that request aligns its canvas
with the kept one (`doc_cache.warm_layers`) as it would with the previous process's memory.

The folder is keyed by everything the keys' bits depend on: the checkpoint's files, the engine's code,
the CPU, threads, torch, device, dtype and the calibration applied (a new calibration is a new folder). A
file names its document by a hash and holds the document id to check it; one that does not read is
deleted. The newest KEEP files of a folder stay (about 47 MB each for the bundled model's 1,024-token
window, float32)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from engine.cache.doc_cache import DocKV
from engine.models.layers import LayerKV

logger = logging.getLogger(__name__)

KEEP = 8


class DocStore:
    """The kept documents of one folder (`Engine` names it by what the keys' bits depend on)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, doc_id: str) -> Path:
        return self.folder / f"{hashlib.sha256(doc_id.encode()).hexdigest()[:32]}.safetensors"

    def load(self, doc_id: str) -> DocKV | None:
        """The document's kept keys and values, or None (none kept, or a file that does not read)."""
        from safetensors import safe_open

        path = self._path(doc_id)
        if not path.exists():
            return None
        try:
            with safe_open(str(path), framework="pt") as f:
                meta = f.metadata()
                if meta.get("doc_id") != doc_id:
                    return None
                layers = [LayerKV(f.get_tensor(f"k.{i}"), f.get_tensor(f"v.{i}")) for i in range(int(meta["layers"]))]
                spans = json.loads(meta["spans"])
                return DocKV(json.loads(meta["ids"]), layers,
                             [tuple(s) for s in spans] if spans is not None else None, json.loads(meta["block"]))
        except Exception:  # a torn or foreign file: the document is prefilled as if none were kept
            logger.warning("dropping the unreadable document cache %s", path, exc_info=True)
            path.unlink(missing_ok=True)
            return None

    def save(self, doc_id: str, kv: DocKV) -> None:
        """Keep `kv` for `doc_id` (atomically: a failure leaves the previous file or none)."""
        from safetensors.torch import save_file

        path = self._path(doc_id)
        temp = path.with_suffix(f".{os.getpid()}.tmp")
        tensors = {f"{name}.{i}": t.detach().to("cpu").contiguous()
                   for i, layer in enumerate(kv.layers) for name, t in (("k", layer.k), ("v", layer.v))}
        meta = {"doc_id": doc_id, "layers": str(len(kv.layers)), "ids": json.dumps(kv.ids),
                "spans": json.dumps(kv.spans), "block": json.dumps(kv.block)}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            save_file(tensors, str(temp), metadata=meta)
            temp.replace(path)
        except OSError:
            temp.unlink(missing_ok=True)
            logger.warning("could not keep the document cache in %s", self.folder, exc_info=True)
            return
        self._prune()

    def _prune(self) -> None:
        """The newest KEEP files stay (another server may be pruning the same folder: a file gone is fine)."""
        def age(path: Path) -> int:
            try:
                return path.stat().st_mtime_ns
            except OSError:
                return 0

        for old in sorted(self.folder.glob("*.safetensors"), key=age, reverse=True)[KEEP:]:
            try:
                old.unlink(missing_ok=True)
            except OSError:
                pass
