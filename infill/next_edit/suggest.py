"""Next edits: from the user's last edit to the edits it implies elsewhere, in one multi-spot denoise.

1. Candidate regions from the newest edit (`candidates.regions`): where what it changed still stands, lines
   shaped like the edited one, the lines below it.
2. Every region of a document is masked in one canvas whose header holds the edit history
   (`header.history_header`), and the engine denoises them all in one run, comparing what it writes in
   each region with the text there (`reference.TextReference`): `margin` is how much more likely the
   model's first differing token was than the best token that kept the text.
3. Where the rename rule (`rule.renamed`) rewrites a region, its text is the region's rival: the engine weighs
   it against the text there from the same logits (`rival_margin`). The rule's text is shown when the model
   prefers it by the threshold of the chosen aggressiveness; otherwise the model's own proposal, when it
   prefers that by the threshold. Either only when it brings in a word the user's edit brought in and does
   not undo the edit (`judge`). The rule proposes, the model decides.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from infill.canvas import ContextOverflow
from infill.fill import FillJob, FillOptions, fill_many
from infill.languages import LanguageSpec, get_language
from infill.next_edit.candidates import _WORD, MOST, Region, regions
from infill.next_edit.crop import Crop, around_edit, follows, searchable
from infill.next_edit.edits import DocEdit, replacements
from infill.next_edit.header import history_header
from infill.next_edit.rule import renamed
from infill.parsing import first_error
from infill.reach import char_budget
from infill.spots import Spot
from infill.windows import count_tokens

if TYPE_CHECKING:
    from engine import DenoiseParams
    from engine.api import EngineLike

@dataclass(frozen=True)
class Thresholds:
    """What a region's margins (nats) must reach to be shown. `rule`: the rename rule's text, by its rival
    margin; below zero the model only vetoes a text it finds that much less likely than the text there.
    `model`: the model's own proposal, by its margin; None shows none."""

    rule: float
    model: float | None


AGGRESSIVENESS: dict[str, Thresholds] = {
    "low": Thresholds(rule=-2.0, model=None),
    "medium": Thresholds(rule=-4.0, model=None),
    "high": Thresholds(rule=-math.inf, model=8.0),
}
"""Per `nextEdit.aggressiveness`, chosen with bench.next_edit_sweep on bench.next_edit's 267 tasks (bundled
model). At `low` and `medium` the model only judges the rule's text, each region for its verdict alone
(`proposals`); the -4-nat veto was chosen again on either half of the packages, keeping 95% of the other
half's noise quiet. `high` shows the rule's text wherever it applies and the model's own proposals from 8 nats.
bench.next_edit at ddad576 (2 threads): low 29.3% exact / 98.4% of noise quiet, medium 32.7% / 95.2%, high
34.6% / 80.6%; the rename rule alone 27.8% / 77.4% (docs/figures.md#next-edits)."""


NOT_IN_PLACE = "writes a gap from the text before it alone, so it cannot rewrite a region in place"
"""Why a model with `in_place` False gives no next edits (a block-diffusion checkpoint)."""


def in_place(engine: EngineLike) -> bool:
    """Whether the model reads the text after a gap, which rewriting a region where it stands needs."""
    return engine.max_right != 0


@dataclass(frozen=True)
class NextEditSettings:
    aggressiveness: str = "medium"
    most: int = MOST
    rule: bool = True  # the rename rule's text is each region's rival, which the model judges
    history_tokens: int = 256
    canvas_tokens: int = 512  # a window of the document around the regions: a shorter first step

    def __post_init__(self) -> None:
        if self.aggressiveness not in AGGRESSIVENESS:
            raise ValueError(f"aggressiveness {self.aggressiveness!r}: use one of {', '.join(AGGRESSIVENESS)}")


@dataclass(frozen=True)
class OpenDocument:
    uri: str
    text: str
    language: str | LanguageSpec


@dataclass(frozen=True)
class NextEdit:
    """Replace `start`..`end` (str offsets) of document `uri` with `new_text`. `margin`: the model's (None: it
    gave none); `source`: "model" or "rule" (the model's change, the line carried over by the rename rule)."""

    uri: str
    start: int
    end: int
    new_text: str
    old_text: str
    region: Region
    margin: float | None
    source: str


@dataclass(frozen=True)
class Judged:
    """What became of one candidate region (bench.next_edit reads these)."""

    region: Region
    proposal: str | None
    margin: float | None
    shown: NextEdit | None
    why: str


def _words(tokens: set[str] | frozenset[str]) -> set[str]:
    """The tokens that carry meaning: names, numbers, strings and comments (a `# noqa: UP045` edit is one)."""
    return {t for t in tokens if _WORD.match(t) or t.startswith("#")}


def shares_change(edit: DocEdit, old: str, new: str) -> bool:
    """Whether turning `old` into `new` brings in a word (a name, a number, a string) `edit` brought in, or,
    when the edit brought in none (a deletion), takes out a word it took out."""
    changes = replacements(old, new)
    removed = {t for r in changes for t in r.old} - {t for r in changes for t in r.new}
    added = {t for r in changes for t in r.new} - {t for r in changes for t in r.old}
    if _words(edit.added):
        return bool(_words(added) & _words(edit.added))
    return bool(_words(removed) & _words(edit.removed))


def undoes(edit: DocEdit, old: str, new: str) -> bool:
    """Whether turning `old` into `new` takes back what `edit` did: removes a token it added and brings back
    one it removed, or brings back its old lines."""
    changes = replacements(old, new)
    removed = {t for r in changes for t in r.old} - {t for r in changes for t in r.new}
    added = {t for r in changes for t in r.new} - {t for r in changes for t in r.old}
    return bool(removed & edit.added and added & edit.removed) or (
        bool(edit.old_lines.strip()) and edit.old_lines.strip() in new and edit.old_lines.strip() not in old)


def _gated(edit: DocEdit, current: str, text: str) -> str | None:
    """Why `text` in place of `current` is no next edit of `edit` (None: it may be one)."""
    if not shares_change(edit, current, text):
        return "changes nothing the edit changed"
    if undoes(edit, current, text):
        return "undoes the edit"
    return None


def judge(edit: DocEdit, region: Region, current: str, proposal: str | None, margin: float | None,
          start: int, thresholds: Thresholds, use_rule: bool, rival_margin: float | None = None) -> Judged:
    """Whether to show a region's next edit, and which: the rename rule's text when its rival margin reaches
    `thresholds.rule`, else the model's own proposal when its margin reaches `thresholds.model`; either only
    when it changes some of what the edit changed and does not undo it. A margin of None (a family that
    commits in place gave none) does not hold a proposal back."""

    def shown(text: str, source: str, by: float | None) -> Judged:
        return Judged(region, proposal, margin,
                      NextEdit(region.uri, start, start + len(current), text, current, region, by, source), "shown")

    rule = renamed(edit, current) if use_rule else None
    why = "the model keeps the text"
    unvetoed = thresholds.rule == -math.inf  # `high`: the rule's text whatever the model's margin, or its lack
    if rule is not None and (rival_margin is not None or unvetoed):
        vetoed = not unvetoed and not (rival_margin is not None and rival_margin >= thresholds.rule)  # NaN: vetoed
        why = _gated(edit, current, rule) or (f"rule margin {format(rival_margin, '.2f')} under {thresholds.rule}" if vetoed else "")
        if not why:
            return shown(rule, "rule", rival_margin)
    if proposal is not None and proposal != current:
        if thresholds.model is None:
            return Judged(region, proposal, margin, None, why if rule is not None else "the model's own are not shown")
        why = _gated(edit, current, proposal) or (f"margin {margin:.2f} under {thresholds.model}"
                                                  if margin is not None and margin < thresholds.model else "")
        if not why:
            return shown(proposal, "model", margin)
    return Judged(region, proposal, margin, None, why)


SLACK = 4  # masks beyond the longer of the region's text and the edit's new run


def _spot(text: str, region: Region, edit: DocEdit, tokenizer: object) -> Spot:
    """The region's text as a spot: room for it, or for what the edit wrote in place of such text, whichever
    is longer, plus SLACK; a line when it ends inside one line."""
    longest = max([count_tokens(text[region.start : region.end], tokenizer)]
                  + [count_tokens(r.new_text, tokenizer) for r in edit.changes])
    kind = "line" if "\n" not in text[region.start : region.end].rstrip("\n") else "block"
    return Spot(region.start, region.end, longest + SLACK, kind)


def parting(current: str, rival: str) -> int:
    """The offset of the first character where `rival` and `current` differ (the shorter's length when one
    starts the other)."""
    return next((i for i, (a, b) in enumerate(zip(current, rival)) if a != b), min(len(current), len(rival)))


def _verdict_spot(text: str, region: Region, rival: str, tokenizer: object) -> Spot:
    """The region's spot for a verdict alone: masked from where the rule's text parts from the text there,
    what both share left in the canvas as it stands (the canvas moves the token it ends in into the span, as
    a lead the model must write, `infill.leads`). Masked from the region's start, the model would write the
    shared text again, a step a token, before its verdict (`margins`), and a first token that spelled neither
    text there would leave no verdict at all (the two texts' best tokens are the same ones)."""
    current = text[region.start : region.end]
    k = parting(current, rival)
    longest = max(count_tokens(current[k:], tokenizer), count_tokens(rival[k:], tokenizer))
    kind = "line" if "\n" not in current[k:].rstrip("\n") else "block"
    return Spot(region.start + k, region.end, longest + SLACK, kind)


@dataclass(frozen=True)
class Proposal:
    """What the model wrote in one region (None: nothing kept, or a result that did not parse), its margin,
    and its margin for the rename rule's text there (when the rule rewrites the region), before judgement."""

    region: Region
    current: str
    proposal: str | None
    margin: float | None
    rival_margin: float | None = None


def proposals(engine: EngineLike, document: OpenDocument, history: Sequence[DocEdit],
              params: DenoiseParams | None = None, settings: NextEditSettings = NextEditSettings(),
              others: Sequence[OpenDocument] = (), cancel: Callable[[], bool] | None = None,
              context: str = "", lines: tuple[int, int] | None = None) -> tuple[DocEdit | None, list[Proposal]]:
    """The newest edit of `document` in `history`, and the model's proposal for every candidate region after
    it, ranked; `others`: the other open documents, `context`: repository context for the header, `lines`:
    only regions within these lines of `document` (`candidates.regions`)."""
    mine = [e for e in history if e.uri == document.uri]
    if not mine:
        return None, []
    edit = mine[-1]
    spec = get_language(document.language)
    by_uri = {d.uri: d for d in (document, *others)}
    found = regions(edit, document.text, spec,
                    [(d.uri, d.text, get_language(d.language)) for d in others], settings.most, lines)
    rival_of = {r: renamed(edit, by_uri[r.uri].text[r.start : r.end]) if settings.rule else None for r in found}
    verdicts = settings.rule and AGGRESSIVENESS[settings.aggressiveness].model is None
    if verdicts:  # only the rule's text can be shown: the other regions need no model, the rule's only a verdict
        found = [r for r in found if rival_of[r] is not None]
        if not found:
            return edit, []
    while True:
        jobs, places = [], []
        for uri in dict.fromkeys(r.uri for r in found):
            doc = by_uri[uri]
            doc_spec = get_language(doc.language)
            picked = sorted((r for r in found if r.uri == uri), key=lambda r: r.start)
            spots = [_verdict_spot(doc.text, r, str(rival_of[r]), engine.tokenizer) if verdicts
                     else _spot(doc.text, r, edit, engine.tokenizer) for r in picked]
            rivals = tuple(None if rival_of[r] is None else str(rival_of[r])[s.start - r.start :]
                           for r, s in zip(picked, spots))
            header = history_header(history, doc_spec.comment_prefix, engine.tokenizer, settings.history_tokens)
            jobs.append(FillJob(doc.text, tuple(spots), doc_spec, uri, header + context, rivals))
            places.append(list(zip(picked, spots)))
        try:
            options = FillOptions(retries=0, compare=True, max_length=min(settings.canvas_tokens, engine.max_length))
            results = fill_many(engine, jobs, params, cancel, options)
            break
        except ContextOverflow:  # the regions of one document lie further apart than the model reads
            if len(found) <= 1:
                return edit, []
            found = found[:-1]
    made: dict[Region, Proposal] = {}
    for job, result, placed in zip(jobs, results, places):
        by_start = {e.start: e for e in result.edits}
        for (region, spot), margin, rival in zip(placed, result.margins, result.rival_margins):
            edit_here = by_start.get(spot.start)
            kept = job.text[region.start : spot.start]
            text = kept + edit_here.new_text if edit_here is not None and edit_here.end == spot.end else None
            made[region] = Proposal(region, job.text[region.start : region.end], text, margin, rival)
    return edit, [made[r] for r in found if r in made]


def propose(engine: EngineLike, document: OpenDocument, history: Sequence[DocEdit],
            params: DenoiseParams | None = None, settings: NextEditSettings = NextEditSettings(),
            others: Sequence[OpenDocument] = (), cancel: Callable[[], bool] | None = None,
            context: str = "", lines: tuple[int, int] | None = None) -> list[Judged]:
    """Every candidate region after the newest edit of `document` in `history`, judged (shown ones have
    `shown`); `lines` as `proposals`. A huge document is read around the edit alone (`crop`); none after an
    edit no next edit follows (a paste)."""
    mine = [e for e in history if e.uri == document.uri]
    if not mine or not follows(mine[-1]):
        return []
    budget = char_budget(engine)
    cut = around_edit(document.text, mine[-1], budget)
    kept = replace(document, text=cut.text)
    moved = [cut.edit_in(e) if e.uri == document.uri else e for e in history]
    near = [d for d in others if searchable(d.text, budget)]
    edit, made = proposals(engine, kept, moved, params, settings, near, cancel, context, cut.lines_in(lines))
    if edit is None:
        return []
    documents = {d.uri: d for d in (kept, *near)}
    judged = judge_all(edit, made, AGGRESSIVENESS[settings.aggressiveness], settings.rule, documents)
    return [_whole(j, cut) if j.region.uri == document.uri else j for j in judged]


def _whole(judged: Judged, cut: Crop) -> Judged:
    """A judgement of the cropped document in the whole document's offsets and lines."""
    region = cut.region_out(judged.region)
    shown = judged.shown
    if shown is not None:
        shown = replace(shown, start=shown.start + cut.offset, end=shown.end + cut.offset, region=region)
    return replace(judged, region=region, shown=shown)


def judge_all(edit: DocEdit, made: Sequence[Proposal], thresholds: Thresholds, use_rule: bool,
              documents: Mapping[str, OpenDocument]) -> list[Judged]:
    """Each proposal judged (`judge`), and a shown edit held back when it would break the parse of a document
    that parsed (the rule's text is plain substitution: `JsonResponse` renamed in `from app.http import
    JsonResponse` to `self.render`)."""
    parsed: dict[str, bool] = {}
    out = []
    for p in made:
        judged = judge(edit, p.region, p.current, p.proposal, p.margin, p.region.start, thresholds, use_rule,
                       p.rival_margin)
        shown, doc = judged.shown, documents.get(p.region.uri)
        if shown is not None and doc is not None:
            spec = get_language(doc.language)
            if doc.uri not in parsed:
                parsed[doc.uri] = first_error(doc.text, spec) is None
            if parsed[doc.uri] and first_error(doc.text[: shown.start] + shown.new_text + doc.text[shown.end :],
                                               spec) is not None:
                judged = Judged(p.region, p.proposal, p.margin, None, "would break the file's parse")
        out.append(judged)
    return out


def suggest(engine: EngineLike, document: OpenDocument, history: Sequence[DocEdit],
            params: DenoiseParams | None = None, settings: NextEditSettings = NextEditSettings(),
            others: Sequence[OpenDocument] = (), cancel: Callable[[], bool] | None = None,
            context: str = "", lines: tuple[int, int] | None = None) -> list[NextEdit]:
    """The next edits to show, best first (the candidates' rank: the nearest place that still holds what the
    edit changed, below it before above it); `lines` as `proposals`."""
    return [j.shown for j in propose(engine, document, history, params, settings, others, cancel, context, lines)
            if j.shown is not None]
