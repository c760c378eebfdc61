"""How the editor tests build the VS Code extension: a clean copy of editors/vscode, `npm ci`, `tsc`,
and `vsce package` for the .vsix that users install."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"
SKIP_IN_COPY = {"node_modules", "out", ".vscode-test"}


def run(args: list[str], cwd: Path, timeout: float = 300, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        args, check=False, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"`{' '.join(args)}` exited with {result.returncode}:\n{output[-4000:]}"
    return output


def build_extension(copy: Path) -> Path:
    """Copies the extension to `copy`, installs its locked dependencies and compiles it."""
    for tool in ("node", "npm", "npx"):
        assert shutil.which(tool), (
            f"`{tool}` is not on PATH: the VS Code extension test needs Node.js >= 20 and npm"
        )
    shutil.copytree(
        EXTENSION,
        copy,
        ignore=lambda _dir, names: [n for n in names if n in SKIP_IN_COPY or n.endswith(".vsix")],
    )
    run(["npm", "ci", "--no-audit", "--no-fund"], copy)
    run(["npm", "run", "compile"], copy)
    return copy


def package_vsix(built: Path) -> Path:
    vsix = built / "dcomplete.vsix"
    if not vsix.is_file():
        run(
            ["npx", "--no-install", "vsce", "package", "--allow-missing-repository", "--out", str(vsix)],
            built,
        )
    return vsix
