"""The kernels' C sources ship whole: every file a source includes is in the package's data, so an installed
dcomplete (not only a checkout) builds its kernels. (row_attention.h was missing from the wheel, and an
installed package's attention build failed to torch's products.)"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "engine" / "kernels"


def _included(source: Path) -> set[Path]:
    found: set[Path] = set()
    for name in re.findall(r'^#include "([^"]+)"', source.read_text(), re.M):
        path = source.with_name(name)
        found |= {path} | _included(path)
    return found


def test_every_file_a_kernel_source_includes_is_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["engine"]
    shipped = {path for pattern in globs for path in (ROOT / "engine").glob(pattern)}
    sources = set(KERNELS.glob("*.c"))
    needed = sources | {path for source in sources for path in _included(source)}
    assert len(needed) > len(sources)  # the sources include headers: the check reads something
    assert needed <= shipped, sorted(str(path.relative_to(ROOT)) for path in needed - shipped)
