"""The state of a running denoising loop, row by row, and when its rows change between steps.

With a `RowFeed` (engine.batcher's), the loop is continuous: before each step it asks the feed for more
requests, whose rows join the batch (their canvases are prefilled by that step's forward like any new
row's), and every row that is done (filled, or left because its cancel fired) is handed to the feed and
taken out of the batch, so the rows still running carry on with the newcomers. Without a feed the loop
runs the rows it was given and returns them all at the end.

`LoopState` holds every per-row store of a run (the canvases, the loop's bookkeeping `LoopRows`, the
family's predictor with its cache, the positions written last step), so rows join (`join`) and leave
(`keep`) all of them at once, in one place.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import torch

from engine.cache.doc_cache import DocKV
from engine.denoise.canvas_batch import CanvasBatch
from engine.denoise.rows import LoopRows
from engine.denoise.seam import CommitPolicy, Predictor
from engine.types import InfillRequest, InfillResult, Span


class DocKeys(Protocol):
    """Documents' kept keys and values (`engine.cache.documents.Documents`)."""

    def get(self, doc_id: str) -> DocKV | None: ...

    def put(self, doc_id: str, kept: DocKV) -> None: ...


class RowFeed(Protocol):
    def admit(self) -> list[InfillRequest]:
        """Requests that join the running loop now (they share its params); [] for none."""
        ...

    def done(self, index: int, result: InfillResult) -> None:
        """The request taken `index`-th is done: its row has left the batch."""
        ...

    def stepped(self, rows: int) -> None:
        """The loop ran one step over `rows` rows."""
        ...


@dataclass
class LoopState:
    batch: CanvasBatch
    rows: LoopRows
    predictor: Predictor
    commit: CommitPolicy
    end_ids: frozenset[int]
    changed: torch.Tensor  # (B, L): positions whose ids the last step wrote
    started: float = field(default_factory=time.perf_counter)
    taken: int = 0  # requests taken so far, joiners included
    cancelled: bool = False
    done: dict[int, InfillResult] = field(default_factory=dict)
    documents: DocKeys | None = None
    keeper: dict[str, int] = field(default_factory=dict)  # per document, the request whose row keeps its keys

    def open(self) -> bool:
        return bool(self.batch.masked.any())

    def widen_changed(self) -> None:
        """`changed` as wide as the batch (a span grew, or wider rows joined)."""
        self.changed = torch.nn.functional.pad(self.changed, (0, self.batch.x.shape[1] - self.changed.shape[1]))

    def join(self, new: CanvasBatch, requests: list[InfillRequest], steps: int | None) -> None:
        """Rows for `requests` (canvases `new`) enter the running batch."""
        self.batch.extend(new)
        self.predictor.add_rows(len(requests))
        self.rows.extend(LoopRows.start(requests, new.masked, steps, self.taken))
        self.taken += len(requests)
        self.widen_changed()
        self.changed = torch.cat([self.changed, self.changed.new_zeros((len(requests), self.changed.shape[1]))])

    def keep(self, staying: list[int]) -> None:
        """Only the rows `staying`, in that order, go on."""
        self.batch.keep(staying)
        self.predictor.keep_rows(staying)
        self.rows.keep(staying)
        self.changed = self.changed[torch.tensor(staying, dtype=torch.long, device=self.changed.device)]

    def leave_cancelled(self) -> bool:
        """Rows whose request's `cancel` now returns True leave the batch; whether any left."""
        open_rows = self.batch.masked.any(-1).tolist()
        any_left = False
        for b, request in enumerate(self.rows.requests):
            if request.cancel is not None and open_rows[b] and request.cancel():
                self.batch.leave(b)
                self.rows.left[b] = any_left = True
        return any_left

    def hand_over(self, feed: RowFeed) -> None:
        """Each row that is done (no mask to fill nor draft to verify, or it left) goes to `feed.done` and
        out of the batch, unless it is the last row (the loop's result at its end)."""
        busy = self.batch.masked.any(-1)
        if self.batch.drafts is not None:
            busy |= self.batch.drafts.any(-1)
        finished = (~busy).nonzero().flatten().tolist()
        staying = busy.nonzero().flatten().tolist()
        if not finished or not staying:
            return
        for b in finished:
            i = self.rows.index[b]
            self.done[i] = self.finish(b, self.rows.left[b])
            feed.done(i, self.done[i])
        self.keep(staying)

    def finish(self, b: int, cancelled: bool) -> InfillResult:
        """Row b's result; a row that ran to its end keeps its keys for its document when it is the keeper."""
        doc_id = self.rows.requests[b].doc_id
        if (not cancelled and self.documents is not None and doc_id is not None
                and self.keeper.get(doc_id) == self.rows.index[b]):
            kept = self.predictor.keep(self.batch, b)
            if kept is not None:
                self.documents.put(doc_id, kept)
        return self.result(b, cancelled)

    def result(self, b: int, cancelled: bool) -> InfillResult:
        batch = self.batch
        ids = batch.row_ids(b)
        row = batch.rows[b]
        spans = [Span(s, e, ids[s:e], row.margins.get(i), row.rival_margins.get(i)) for i, (s, e) in enumerate(row.spans)]
        stats = self.rows.stats[b]
        stats.new_tokens = sum(1 for sp in spans for t in sp.token_ids if t not in self.end_ids and t != batch.mask_id)
        stats.seconds = time.perf_counter() - self.started
        return InfillResult(ids, spans, stats, cancelled)
