"""`GET /metrics` of the replicas' ingress: how it routed (per replica, and warm hits in total), which
replicas are up, and every replica's own engine-server metrics with a `replica` label added, in one
Prometheus exposition (one family per name, so scrapers that insist on that accept it). Sum over the
label for the whole service, e.g. `sum(rate(dcomplete_tokens_total[1m]))`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from remote.serve.routing import Route


class RouteMetrics:
    def __init__(self, replicas: int) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.routed = Counter("dcomplete_routed", "requests sent to a replica, by how the document's cache stood: "
                              "warm (its replica), cold (a new document), moved (its replica was down or busy), "
                              "keyless (no document)", ["replica", "kind"], registry=r)
        self.warm = Counter("dcomplete_warm_hits", "requests sent to the replica holding their document, all "
                            "replicas", registry=r)
        self.keyed = Counter("dcomplete_keyed_requests", "requests that named a document, all replicas", registry=r)
        self.failures = Counter("dcomplete_replica_failures", "calls a replica failed (died, unreachable)",
                                ["replica"], registry=r)
        self.retries = Counter("dcomplete_retries", "requests sent again to another replica", registry=r)
        self.up = Gauge("dcomplete_replica_up", "1 while the replica answers", ["replica"], registry=r)
        self.inflight = Gauge("dcomplete_replica_inflight", "requests the ingress has sent the replica and awaits",
                              ["replica"], registry=r)
        for i in range(replicas):
            self.up.labels(str(i)).set(1)

    def count(self, route: Route) -> None:
        self.routed.labels(str(route.replica), route.kind).inc()
        if route.kind != "keyless":
            self.keyed.inc()
        if route.kind == "warm":
            self.warm.inc()

    def exposition(self, replica_texts: dict[int, str]) -> bytes:
        """The ingress's metrics, then each replica's under `replica="<index>"`."""
        registry = CollectorRegistry()
        registry.register(_Merged(replica_texts))
        return generate_latest(self.registry) + generate_latest(registry)


class _Merged:
    """A collector of the replicas' families, relabelled."""

    def __init__(self, texts: dict[int, str]) -> None:
        self.texts = texts

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        for replica, text in sorted(self.texts.items()):
            for family in text_string_to_metric_families(text):
                merged = families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
                for sample in _relabelled(family.samples, str(replica)):
                    merged.samples.append(sample)
        yield from families.values()


def _relabelled(samples: Iterable[Sample], replica: str) -> Iterator[Sample]:
    for sample in samples:
        yield sample._replace(labels={**sample.labels, "replica": replica})
