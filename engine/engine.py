"""`Engine`: a loaded checkpoint plus the denoising loop, the public face of the engine package."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TypeVar

from engine.api import ModelTraits, WithTraits
from engine.cache.doc_cache import DocCache
from engine.cache.doc_store import DocStore
from engine.cache.documents import Documents
from engine.denoise.loop import Denoiser
from engine.denoise.seam import LoadedModel
from engine.denoise.state import RowFeed
from engine.families.registry import load
from engine.loading.compiled import BackgroundCompile, mode_of
from engine.loading.compiled import start as start_compiled
from engine.loading.devices import engine_choice
from engine.params import DenoiseParams
from engine.types import InfillRequest, InfillResult

logger = logging.getLogger(__name__)


class Engine(WithTraits):
    """Denoises canvases of token ids. Not thread-safe: callers serialise `infill` calls."""

    def __init__(self, loaded: LoadedModel, build: BackgroundCompile | None = None,
                 keep_documents: bool = False) -> None:
        self.loaded = loaded
        self._compiling = build
        adapter = getattr(loaded.model, "adapter", None)
        max_right = adapter.shape.max_right if adapter is not None else loaded.family.max_right
        self.traits = ModelTraits(loaded.tokenizer, loaded.special, loaded.max_length, loaded.family.left_to_right,
                                  max_right)
        self._denoiser = (loaded.family.runner or Denoiser)(loaded)
        self._keeps_documents = keep_documents and loaded.device.type == "cpu"
        self._documents = Documents(_document_store(loaded) if self._keeps_documents else None)

    @classmethod
    def load(cls, spec: str | os.PathLike[str] = "default", device: str | None = None,
             dtype: str | None = None, compiled: str | None = None, keep_documents: bool = False) -> Engine:
        """`compiled` (`engine.loading.compiled`: off, int8 or auto; None: `DCOMPLETE_COMPILED`, else
        off): whether compiled int8 decoding products are built in the background and swapped in.
        `keep_documents`: documents' cached keys and values outlive the process (`engine.cache.doc_store`,
        on a CPU): a server started again writes its first suggestion in a file it served without a prefill."""
        mode = mode_of(compiled)
        loaded = load(spec, device=device, dtype=dtype)
        return cls(loaded, start_compiled(loaded.model, loaded.device, engine_choice(dtype), mode), keep_documents)

    @property
    def family(self) -> str:
        return self.loaded.family.name

    @property
    def device(self) -> str:
        return str(self.loaded.device)

    @property
    def name(self) -> str:
        return self.loaded.folder.name

    def infill(
        self,
        requests: Sequence[InfillRequest],
        params: DenoiseParams | None = None,
        cancel: Callable[[], bool] | None = None,
        feed: RowFeed | None = None,
    ) -> list[InfillResult]:
        """Fill every mask of every canvas; one batch, one loop. See ARCHITECTURE.md for the contract.
        With a `feed` (`engine.denoise.state.RowFeed`), more requests join between steps and every request's
        result goes to `feed.done` as soon as its row is done."""
        if not requests:
            return []
        params = params or DenoiseParams()
        self.check(requests)
        documents = self._documents if params.cache == "fixed" else None
        return self._denoiser.run(list(requests), params, cancel, documents, feed)

    def warm(self, requests: Sequence[InfillRequest], params: DenoiseParams | None = None) -> bool:
        """Compute and keep the fixed text's K/V of each request that names a document, writing nothing, so
        the document's next request only runs what changed and its gaps (a language server calls it while
        the user reads a file); whether anything was kept."""
        params = params or DenoiseParams()
        if params.cache != "fixed":
            return False
        self.check(requests)
        kept_any = False
        for request in requests:
            if request.doc_id is not None:
                kept = self._denoiser.prefill(request, params, self._documents.get(request.doc_id))
                if kept is not None:
                    self._documents.put(request.doc_id, kept)
                    kept_any = True
        return kept_any

    @property
    def calibrating(self) -> bool:
        """Whether this machine's calibration is still to be measured (the load applied a default one:
        `engine.loading.tuning`) or compiled products are still to be built and swapped in
        (`engine.loading.compiled`); the engine's owner then calls `calibrate_step` while it is idle."""
        return self.loaded.pending is not None or self._compiling is not None

    def calibrate_step(self) -> bool:
        """One piece of the background work on the calling thread, the one that runs this engine, between
        requests: the calibration's (`_measure_step`), then the compiled products' (`BackgroundCompile.step`:
        a short wait for their build, or loading one). Returns whether pieces remain."""
        if self.loaded.pending is not None:
            return self._measure_step() or self._compiling is not None
        build = self._compiling
        if build is None:
            return False
        done, remains = _guarded(build.step, "compiled products failed; the eager kernels stay")
        remains = done and bool(remains)
        if build.swapped:
            self._new_kernels()  # keys and values of the eager kernels: a new process would not have them
        if not remains:
            self._compiling = None
        return remains

    def _measure_step(self) -> bool:
        """Run one piece of the measurement (about one forward) on the calling thread, the one that runs this
        engine, between requests; after the last piece the measured kernels serve the next request, which
        then gets what a new process with the kept calibration gives (documents' cached keys and values,
        computed with the old kernels, are dropped). Returns whether pieces remain. A measurement that fails
        is logged and abandoned: the default kernels keep serving."""
        pending = self.loaded.pending
        if pending is None:
            return False
        done, found = _guarded(pending.step, "measuring this machine's kernels failed; the default ones stay")
        if not done:
            self.loaded.pending = None
            return False
        if found is not None:
            self.loaded.calibration, self.loaded.pending = found, None
            self.loaded.drafting.row_cost = found.row_cost
            self._new_kernels()
        return self.loaded.pending is not None

    @property
    def doc_cache(self) -> DocCache:
        """Documents' cached keys/values across requests: `len`, `nbytes`, `set_budget(bytes)`."""
        return self._documents.memory

    def check(self, requests: Sequence[InfillRequest]) -> None:
        """Raise ValueError for a canvas the engine cannot fill (before it joins a batch of others)."""
        for r in requests:
            if self.special.mask_id not in r.canvas:
                raise ValueError("a canvas has no mask token to fill")
            if any(not 0 <= t < self.loaded.model.input_vocab for t in r.canvas):
                raise ValueError("a canvas holds token ids outside the model's vocabulary")

    def forget(self, doc_id: str) -> None:
        """Drop a document's cached keys/values (e.g. when it is closed; with `keep_documents`, the last
        of them are written to disk first)."""
        self._documents.forget(doc_id)

    def _new_kernels(self) -> None:
        """Other kernels serve from now on: cached keys and values computed with the old ones go, and kept
        documents are looked for where those of the new kernels are."""
        self._documents.renew(_document_store(self.loaded) if self._keeps_documents else None)


T = TypeVar("T")


def _guarded(piece: Callable[[], T], failing: str) -> tuple[bool, T | None]:
    """(True, what a piece of background work returns), or (False, None) with `failing` and the traceback
    logged: the engine keeps serving with the kernels it has."""
    try:
        return True, piece()
    except Exception:
        logger.exception(failing)
        return False, None


def _document_store(loaded: LoadedModel) -> DocStore:
    """The folder of documents kept for `loaded` as it runs now: named by everything their keys' bits depend
    on (the checkpoint's files, the engine's code, the machine, device, dtype and calibration)."""
    from engine.loading.gguf_base import cache_root
    from engine.loading.tuning import machine_key

    folder = loaded.folder
    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else [folder]
    code = sorted(Path(__file__).resolve().parent.rglob("*.py"))
    key = machine_key(str(loaded.device), str(loaded.dtype), str(loaded.kv_dtype),
                      json.dumps(asdict(loaded.calibration), sort_keys=True),
                      files=[*files, *code])
    return DocStore(cache_root() / "documents" / key[:24])
