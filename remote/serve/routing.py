"""Which replica answers a request: the one holding its document's keys/values while that replica is up
and not much busier than the least loaded one, else the least loaded. Plain Python, no Ray: the ingress
(`remote.serve.ingress`) owns one `Router` and tells it what each call did.

A request's document key comes from its body (`document_key`), in this order: the
`X-Dcomplete-Supersede` header (one stream of requests for one document: superseding only works
where the earlier request runs), llama.cpp's `id_slot` (with `cache_prompt`), the first canvas's
`doc_id` of the native canvas form (what the language server's `engineUrl` client sends), Tabby's
`segments.filepath`, else a hash of the prompt's first `LEAD_CHARS` characters (or the canvas's first
token ids), which stay the same while the user types further down the file.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

import msgspec

LEAD_CHARS = 512
LEAD_IDS = 128
SUPERSEDE_HEADER = "x-dcomplete-supersede"
Kind = Literal["warm", "cold", "moved", "keyless"]


class _Canvas(msgspec.Struct):
    ids: list[int] = []
    doc_id: str | None = None


class _Segments(msgspec.Struct):
    prefix: str = ""
    filepath: str | None = None


class _Keys(msgspec.Struct):
    """The fields of every endpoint's body that name or start a document; the rest is skipped."""

    id_slot: int = -1
    cache_prompt: bool = True
    input_prefix: str = ""
    prompt: str | list[str] | None = None
    canvases: list[_Canvas] | None = None
    segments: _Segments | None = None
    text: str | None = None


def document_key(body: bytes, supersede: str | None = None) -> str | None:
    """The document a request belongs to, or None (no body, or one the replica will refuse anyway)."""
    if supersede:
        return f"supersede:{supersede}"
    if not body:
        return None
    try:
        keys = msgspec.json.decode(body, type=_Keys)
    except (msgspec.DecodeError, RecursionError):
        return None
    if keys.id_slot >= 0 and keys.cache_prompt:
        return f"slot:{keys.id_slot}"
    if keys.canvases:
        first = keys.canvases[0]
        return f"doc:{first.doc_id}" if first.doc_id else _digest(",".join(map(str, first.ids[:LEAD_IDS])))
    if keys.segments is not None:
        seg = keys.segments
        return f"file:{seg.filepath}" if seg.filepath else _digest(seg.prefix)
    prompt = keys.prompt[0] if isinstance(keys.prompt, list) and keys.prompt else keys.prompt
    lead = keys.input_prefix or (prompt if isinstance(prompt, str) else "") or keys.text or ""
    return _digest(lead) if lead else None


def _digest(text: str) -> str:
    return "lead:" + hashlib.blake2b(text[:LEAD_CHARS].encode(), digest_size=12).hexdigest()


@dataclass(frozen=True)
class RoutingConfig:
    """slack: how many more requests in flight than the least loaded replica its document's replica may
    hold and still get it; affinity False: always the least loaded (for comparison); keys: documents
    remembered (least recently routed forgotten first)."""

    slack: int = 4
    affinity: bool = True
    keys: int = 100_000


@dataclass(frozen=True)
class Route:
    replica: int
    kind: Kind


class Router:
    def __init__(self, replicas: int, config: RoutingConfig = RoutingConfig()) -> None:
        self.config = config
        self.inflight = [0] * replicas
        self.sent = [0] * replicas
        self.down = [False] * replicas
        self.owner: OrderedDict[str, int] = OrderedDict()

    def choose(self, key: str | None, avoid: frozenset[int] = frozenset()) -> Route | None:
        """The replica for a request with this document key (None: every replica is down or avoided)."""
        live = [i for i in range(len(self.inflight)) if i not in avoid and not self.down[i]]
        if not live:
            return None
        least = min(live, key=lambda i: (self.inflight[i], self.sent[i]))
        if key is None:
            return self._send(least, "keyless")
        owner = self.owner.get(key)
        kind: Kind
        if owner is None:
            chosen, kind = least, "cold"
        elif self.config.affinity and owner in live and self.inflight[owner] <= self.inflight[least] + self.config.slack:
            chosen, kind = owner, "warm"
        else:
            chosen = least
            kind = "warm" if chosen == owner else "moved"
        self.owner[key] = chosen
        self.owner.move_to_end(key)
        while len(self.owner) > self.config.keys:
            self.owner.popitem(last=False)
        return self._send(chosen, kind)

    def _send(self, replica: int, kind: Kind) -> Route:
        self.inflight[replica] += 1
        self.sent[replica] += 1
        return Route(replica, kind)

    def done(self, replica: int) -> None:
        self.inflight[replica] -= 1

    def failed(self, replica: int) -> None:
        """The replica died or could not be reached: left out until it answers the ingress's probe again.
        Its documents' keys/values are gone with it, so their next requests go to the least loaded one."""
        self.down[replica] = True
        for key in [k for k, owner in self.owner.items() if owner == replica]:
            del self.owner[key]

    def revived(self, replica: int) -> None:
        self.down[replica] = False
