"""Which licences the corpus takes: permissive ones only (MIT/Expat, BSD, Apache-2.0, ISC, PSF, zlib).

A licence string is read as an expression: alternatives (`or`, `OR`, `|`, `/`) of which one permissive
alternative is enough, each alternative a conjunction (`and`, `AND`, `,`) of which every part must be
permissive. Anything copyleft (GPL, LGPL, AGPL, MPL, EUPL, CDDL, EPL, CC-BY-SA) in a conjunction rejects
it; an unknown name (public domain, Boost, Unicode, CC0, WTFPL, a licence text) rejects it too.
"""

from __future__ import annotations

import re

FAMILIES = (
    ("MIT", re.compile(r"\bMIT\b|\bExpat\b|\bX11\b", re.IGNORECASE)),
    ("BSD", re.compile(r"\bBSD|0BSD", re.IGNORECASE)),
    ("Apache-2.0", re.compile(r"Apache", re.IGNORECASE)),
    ("ISC", re.compile(r"\bISC\b", re.IGNORECASE)),
    ("PSF-2.0", re.compile(r"\bPSF\b|Python Software Foundation|\bPython-2\.0\b", re.IGNORECASE)),
    ("Zlib", re.compile(r"\bzlib\b|\blibpng\b", re.IGNORECASE)),
)
COPYLEFT = re.compile(r"\b(L?GPL|AGPL|MPL|Mozilla|EUPL|CDDL|EPL|Eclipse|SA)\b|General Public|copyleft", re.IGNORECASE)
_OR = re.compile(r"\s+or\s+|\s*\|\s*|\s*/\s*", re.IGNORECASE)
_EXCEPTION = re.compile(r"\s+with\s+[\w .+-]*?exception", re.IGNORECASE)  # Apache-2.0 WITH LLVM-exception
_AND = re.compile(r"\s+and\s+|\s*,\s*|\s+with\s+", re.IGNORECASE)


def _part_family(part: str) -> str | None:
    part = part.strip().strip("()").strip()
    if not part or COPYLEFT.search(part):
        return None
    found = [name for name, pattern in FAMILIES if pattern.search(part)]
    return found[0] if len(found) == 1 else None


def permissive(expression: str) -> str | None:
    """The permissive family an expression allows (the first alternative that is all permissive), or None."""
    text = _EXCEPTION.sub("", expression).strip()
    if not text:
        return None
    for alternative in _OR.split(text.strip("()")):
        parts = [p for p in _AND.split(alternative) if p.strip()]
        families = [_part_family(p) for p in parts]
        if parts and all(families):
            return "/".join(dict.fromkeys(f for f in families if f))
    return None
