"""The VS Code extension builds from a clean copy: npm ci, tsc --strict, its node:test unit tests, and
`vsce package` producing a .vsix that holds the compiled client and its runtime dependency.

VS Code itself cannot be downloaded here, so the extension host is not started; the parts that do not
need it (settings mapping, command lines, command arguments, status text) are what the unit tests cover.
"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"
SKIP_IN_COPY = {"node_modules", "out", ".vscode-test"}


def run(args: list[str], cwd: Path, timeout: float = 300) -> str:
    result = subprocess.run(args, check=False, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"`{' '.join(args)}` exited with {result.returncode}:\n{output[-4000:]}"
    return output


@pytest.fixture(scope="module")
def built_extension(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for tool in ("node", "npm", "npx"):
        assert shutil.which(tool), (
            f"`{tool}` is not on PATH: the VS Code extension test needs Node.js >= 20 and npm"
        )
    copy = tmp_path_factory.mktemp("vscode") / "extension"
    shutil.copytree(
        EXTENSION,
        copy,
        ignore=lambda _dir, names: [n for n in names if n in SKIP_IN_COPY or n.endswith(".vsix")],
    )
    run(["npm", "ci", "--no-audit", "--no-fund"], copy)
    run(["npm", "run", "compile"], copy)
    return copy


@pytest.mark.slow
def test_unit_tests_pass(built_extension: Path) -> None:
    output = run(["npm", "test"], built_extension)
    assert "# fail 0" in output, output[-2000:]
    passed = [line for line in output.splitlines() if line.startswith("# pass ")]
    assert passed and int(passed[0].split()[-1]) >= 15, output[-2000:]


@pytest.mark.slow
def test_vsce_packages_a_loadable_vsix(built_extension: Path) -> None:
    vsix = built_extension / "dcomplete.vsix"
    run(["npx", "--no-install", "vsce", "package", "--allow-missing-repository", "--out", str(vsix)], built_extension)
    assert vsix.is_file() and vsix.stat().st_size > 10_000

    with zipfile.ZipFile(vsix) as archive:
        names = {name.lower() for name in archive.namelist()}
        unpacked = built_extension / "unpacked"
        archive.extractall(unpacked)
    for required in (
        "extension/package.json",
        "extension/out/src/extension.js",
        "extension/license.txt",
        "extension/readme.md",
        "extension/node_modules/vscode-languageclient/package.json",
    ):
        assert required in names, f"{required} missing from the .vsix"
    assert not any(name.startswith("extension/src/") or name.endswith(".ts") for name in names)

    main = unpacked / "extension" / "out" / "src"
    script = "console.log(require.resolve('vscode-languageclient/node', { paths: [process.argv[1]] }))"
    resolved = run(["node", "-e", script, str(main)], built_extension)
    assert "vscode-languageclient" in resolved


def test_every_server_setting_is_a_vscode_setting():
    """A setting added to the server must reach VS Code users too: package.json declares it and the
    client forwards it (SERVER_SETTING_KEYS)."""
    import json
    import re

    from lsp_server.settings import FIELD_NAMES

    declared = json.loads((EXTENSION / "package.json").read_text())["contributes"]["configuration"]["properties"]
    forwarded_block = (EXTENSION / "src" / "settings.ts").read_text().split("SERVER_SETTING_KEYS = [")[1].split("]")[0]
    forwarded = set(re.findall(r'"(\w+)"', forwarded_block))
    for name in FIELD_NAMES:
        assert f"dcomplete.{name}" in declared, f"package.json does not declare dcomplete.{name}"
        assert name in forwarded, f"settings.ts does not forward {name}"
