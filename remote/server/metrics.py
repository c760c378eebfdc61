"""Prometheus metrics of the engine server (`GET /metrics`), in a registry of its own.

`dcomplete_engine_forwards_total` counts the denoising loop's steps; `dcomplete_row_forwards_total` the
steps each row ran, summed: what the same requests would have cost served one at a time. Shared batching
shows as the first growing slower than the second, and as steps of more than one row in
`dcomplete_batch_rows`. `dcomplete_document_cache_bytes` is the memory the engine keeps for documents it
served (their keys and values, up to the cache's budget): a server's resident memory grows by it.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from engine import InfillResult

LATENCY = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    def __init__(self, document_bytes: Callable[[], int] | None = None) -> None:
        """`document_bytes`: what the engine's document cache holds now, read at each scrape."""
        self.registry = CollectorRegistry()
        r = self.registry
        if document_bytes is not None:
            Gauge("dcomplete_document_cache_bytes", "bytes of documents' keys and values the engine keeps for later "
                  "requests (bounded by its budget)", registry=r).set_function(document_bytes)
        self.requests = Counter("dcomplete_requests", "HTTP requests served", ["endpoint", "status"], registry=r)
        self.latency = Histogram("dcomplete_request_seconds", "time to answer a request", ["endpoint"],
                                 buckets=LATENCY, registry=r)
        self.queue = Gauge("dcomplete_queue_rows", "rows waiting for the engine", registry=r)
        self.running_rows = Gauge("dcomplete_running_rows", "rows in the engine's last step (0: idle)", registry=r)
        self.waited = Histogram("dcomplete_queue_wait_seconds", "time a call waited for the engine",
                                buckets=LATENCY, registry=r)
        self.batch = Histogram("dcomplete_batch_rows", "rows in one engine step",
                               buckets=(1, 2, 4, 8, 16, 32, 64), registry=r)
        self.forwards = Counter("dcomplete_engine_forwards", "denoising steps the engine ran", registry=r)
        self.row_forwards = Counter("dcomplete_row_forwards", "denoising steps of every row, summed", registry=r)
        self.tokens = Counter("dcomplete_tokens", "tokens written", registry=r)
        self.left = Counter("dcomplete_rows_left", "requests that left the batch before they were done",
                            ["reason"], registry=r)

    # engine.batcher.BatchObserver

    def queued(self, rows: int) -> None:
        self.queue.set(rows)

    def admitted(self, waited: float) -> None:
        self.waited.observe(waited)

    def stepped(self, rows: int) -> None:
        self.running_rows.set(rows)
        if rows:
            self.forwards.inc()
            self.batch.observe(rows)

    def finished(self, result: InfillResult) -> None:
        self.row_forwards.inc(result.stats.forward_passes)
        self.tokens.inc(result.stats.new_tokens)

    def text(self) -> bytes:
        return generate_latest(self.registry)
