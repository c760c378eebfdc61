"""Next edits at `low` and `medium`, where only the rename rule's text can be shown: the model weighs the
rule's text in the regions the rule rewrites, masked from where the two texts part, and nothing else."""

from __future__ import annotations

import pytest

from engine import Engine
from infill.languages import get_language
from infill.next_edit.candidates import regions
from infill.next_edit.edits import edit_between
from infill.next_edit.rule import renamed
from infill.next_edit.suggest import NextEditSettings, OpenDocument, parting, proposals

PY = get_language("python")
VIEWS = '''from app.http import JsonResponse


def get(request, user_id):
    user = find(user_id)
    if user is None:
        return JsonResponse({"error": "not found"}, status=404)
    log("got", user_id)
    return JsonResponse(user.to_dict())
'''
EDITED = VIEWS.replace('return JsonResponse({"error"', 'return JsonView({"error"', 1)


@pytest.fixture(scope="module")
def anchored(tiny_anchored) -> Engine:
    return Engine.load(tiny_anchored, device="cpu")


def test_where_two_texts_part() -> None:
    assert parting("JsonResponse(x)", "JsonView(x)") == 4
    assert parting("KeyError", "KeyError(key)") == len("KeyError")  # the rule's text goes on: at its end
    assert parting("a", "b") == 0


def test_only_the_rule_s_regions_are_weighed_and_each_gets_a_verdict(anchored) -> None:
    edit = edit_between("file:///views.py", VIEWS, EDITED)
    assert edit is not None
    document = OpenDocument(edit.uri, EDITED, "python")
    every = regions(edit, EDITED, PY)
    ruled = [r for r in every if renamed(edit, EDITED[r.start : r.end]) is not None]
    assert ruled and len(ruled) < len(every)  # the test needs regions of both kinds
    _, medium = proposals(anchored, document, [edit], settings=NextEditSettings(aggressiveness="medium"))
    assert [p.region for p in medium] == ruled
    for p in medium:
        assert p.current == EDITED[p.region.start : p.region.end]  # the whole region, not the masked part
        assert p.rival_margin is not None
    _, high = proposals(anchored, document, [edit], settings=NextEditSettings(aggressiveness="high"))
    assert {p.region for p in high} == set(every)  # `high` shows the model's own proposals: all are filled
