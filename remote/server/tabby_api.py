"""Tabby's completion API, as its OpenAPI schema defines it (TabbyML/tabby clients/tabby-openapi/openapi.json,
copied to tests/fixtures/tabby/ with its licence): what `tabby-agent`, the LSP agent behind Tabby's VS Code,
IntelliJ, Vim and Eclipse plugins, calls.

- `GET|POST /v1/health` -> `HealthState` (the agent retries with POST on 405);
- `POST /v1/completions`: `segments.prefix`/`suffix` around the cursor, and `declarations` and the two
  snippet lists above the prefix as code from other files (`extra_context`); `temperature` and `seed` go to
  the sampler; `mode` "standard" (the default) completes at the cursor; "next_edit_suggestion" answers the
  next version of `segments.edit_history.current_version` (`edit_api`); the answer is
  `{id, choices: [{index, text}]}`, one choice;
- `POST /v1/events`: `select` (a choice was accepted), `view` (shown), `dismiss` go to the same local
  feedback log as the language server's (`infill.feedback`); nothing leaves the machine.
"""

from __future__ import annotations

import os
import platform
import uuid
from typing import Any

from infill.context import Chunk
from infill.feedback import FeedbackLog
from remote.server import schemas
from remote.server.extra_context import client_chunks
from remote.server.service import RequestError, TextJob, TextOutcome, sampling

VERSION = "0.1.0"


def completion_job(body: schemas.TabbyCompletion) -> TextJob:
    if body.mode not in (None, "standard"):
        raise RequestError(f"mode {body.mode!r}: use 'standard' (at the cursor) or 'next_edit_suggestion'")
    if body.segments is None:
        raise RequestError("segments: give the text around the cursor (segments.prefix, segments.suffix)")
    if body.seed is not None and body.seed < 0:
        raise RequestError(f"seed {body.seed}: must be at least 0")
    seg = body.segments
    doc = f"tabby:{seg.filepath}" if seg.filepath else None
    return TextJob(seg.prefix, seg.suffix or "", _language(body.language), sampling(body.temperature, None, body.seed),
                   doc_id=doc, extra=other_files(seg))


def other_files(seg: schemas.TabbySegments) -> tuple[Chunk, ...]:
    """The code from other files the segments carry (declarations, then the snippets; least relevant first)."""
    snippets = [(s.filepath, s.body) for s in reversed(seg.relevant_snippets_from_recently_opened_files or [])]
    snippets += [(s.filepath, s.body) for s in reversed(seg.relevant_snippets_from_changed_files or [])]
    declarations = [(d.filepath, d.body) for d in reversed(seg.declarations or [])]
    return tuple(client_chunks(snippets) + client_chunks(declarations, "definition", len(snippets)))


def _language(name: str | None) -> str:
    """Tabby sends VS Code's language identifiers; those dcomplete knows are its own names."""
    return (name or "python").lower()


def completion_body(outcome: TextOutcome) -> dict[str, Any]:
    return {"id": f"cmpl-{uuid.uuid4()}", "choices": [{"index": 0, "text": outcome.texts[0]}]}


def health(model: str, device: str) -> dict[str, Any]:
    """`HealthState`: what serves completions here, and this server's version."""
    return {
        "model": model, "device": device, "arch": platform.machine(), "cpu_info": platform.processor() or "",
        "cpu_count": os.cpu_count() or 1, "cuda_devices": [device] if device.startswith("cuda") else [],
        "version": {"build_date": "", "build_timestamp": "", "git_sha": "", "git_describe": f"dcomplete-{VERSION}"},
    }


def log_event(feedback: FeedbackLog, event: schemas.TabbyEvent) -> None:
    where, item = f"tabby:{event.completion_id}", str(event.choice_index)
    if event.type == "select":
        feedback.accept(where, item)
    elif event.type == "view":
        feedback.offered(where, [item])
    elif event.type == "dismiss":
        feedback.reject(where, item)
    else:
        raise RequestError(f"type {event.type!r}: Tabby events are 'view', 'select' or 'dismiss'")
