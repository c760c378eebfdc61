from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from infill.files import BadInput, atomic_write, read_source, unified_diff


def test_atomic_write_keeps_mode_and_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_text("old\n")
    target.chmod(0o751)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    atomic_write(link, "new 世界\n")
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "new 世界\n"
    assert target.stat().st_mode & 0o777 == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "real.py"]


def test_a_failed_write_leaves_the_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_bytes(b"keep me\n")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "lone surrogate \ud800")
    assert target.read_bytes() == b"keep me\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]


def test_read_source_keeps_crlf_and_rejects_bad_bytes(tmp_path: Path) -> None:
    (tmp_path / "crlf.py").write_bytes(b"a = 1\r\nb = 2\r\n")
    assert read_source(tmp_path / "crlf.py") == "a = 1\r\nb = 2\r\n"
    (tmp_path / "bad.py").write_bytes(b"x = '\xff'\n")
    with pytest.raises(BadInput, match=r"bad\.py: not UTF-8 \(byte 5\)"):
        read_source(tmp_path / "bad.py")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc", "a\nB\nc\n"),  # no newline at the end before, one after
        ("a\nb\x0cc\n", "a\nX\x0cY\n"),  # a form feed is not a line break for patch
        ("a = 1\r\nb = 2\r\n", "a = 1\r\nb = 3\r\n"),
        ("x\n", "x\n"),
    ],
)
def test_unified_diff_applies_with_patch_p1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("f.py").write_bytes(old.encode())
    diff = unified_diff("f.py", old, new)
    if old == new:
        assert diff == ""
        return
    assert diff.startswith("--- a/f.py\n+++ b/f.py\n")
    subprocess.run(["patch", "-p1", "--batch", "--quiet"], input=diff.encode(), check=True)
    assert Path("f.py").read_bytes() == new.encode()
