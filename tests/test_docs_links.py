"""Every relative link in the documentation (README.md, ARCHITECTURE.md, docs/, the editors' and training's
READMEs) points at a file of the checkout and, with a `#fragment`, at a heading that file has: moving a
section between pages must move its links too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "ARCHITECTURE.md", *(ROOT / "docs").glob("*.md"),
                *(ROOT / "editors").glob("*/README.md"), ROOT / "training" / "README.md"])
LINK = re.compile(r"\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced blocks, where links and headings live."""
    return "".join(part for i, part in enumerate(re.split(r"^```.*$", text, flags=re.M)) if i % 2 == 0)


def anchors(page: Path) -> set[str]:
    """The fragments GitHub gives the page's headings: lowercased, punctuation dropped, spaces as hyphens,
    a repeated one numbered."""
    seen: dict[str, int] = {}
    for title in re.findall(r"^#+ (.+)$", prose(page.read_text(encoding="utf-8")), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            seen[f"{slug}-{seen[slug]}"] = 0
    return set(seen)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_reaches_its_file_and_heading(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: {linked.relative_to(ROOT)} has no heading #{fragment}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_anchor_rule_matches_github_s() -> None:
    page = ROOT / "docs" / "engine-server.md"
    assert "llamacpps-infill-and-completion" in anchors(page)
    assert "the-language-server-and-the-cli-with-a-remote-engine" in anchors(page)
