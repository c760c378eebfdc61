"""The VS Code extension builds from a clean copy: npm ci, tsc --strict, its node:test unit tests, and
`vsce package` producing a .vsix that holds the compiled client and its runtime dependency.

The unit tests cover what needs no editor (settings mapping, command lines, command arguments, status
text); test_vscode_e2e.py runs the packaged extension in a real VS Code (code-server in Chromium).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from vscode_build import EXTENSION, package_vsix, run


@pytest.mark.slow
def test_unit_tests_pass(built_extension: Path) -> None:
    output = run(["npm", "test"], built_extension)
    assert "# fail 0" in output, output[-2000:]
    passed = [line for line in output.splitlines() if line.startswith("# pass ")]
    assert passed and int(passed[0].split()[-1]) >= 15, output[-2000:]


@pytest.mark.slow
def test_vsce_packages_a_loadable_vsix(built_extension: Path) -> None:
    vsix = package_vsix(built_extension)
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

    import msgspec

    from lsp_server.settings import FIELD_NAMES, Settings

    declared = json.loads((EXTENSION / "package.json").read_text())["contributes"]["configuration"]["properties"]
    forwarded_block = (EXTENSION / "src" / "settings.ts").read_text().split("SERVER_SETTING_KEYS = [")[1].split("]")[0]
    forwarded = set(re.findall(r'"(\w+)"', forwarded_block))
    for field in msgspec.structs.fields(Settings):
        name = field.encode_name
        assert name in FIELD_NAMES and name in forwarded, f"settings.ts does not forward {name}"
        if isinstance(field.default_factory, type) and issubclass(field.default_factory, msgspec.Struct):
            # a group of settings (`nextEdit`): VS Code declares each of its keys, `dcomplete.nextEdit.enabled`
            for sub in msgspec.structs.fields(field.default_factory):
                key = f"dcomplete.{name}.{sub.encode_name}"
                assert key in declared, f"package.json does not declare {key}"
        else:
            assert f"dcomplete.{name}" in declared, f"package.json does not declare dcomplete.{name}"


def test_the_extension_attaches_to_every_language_the_server_completes() -> None:
    import json
    import re

    from infill.languages import editor_language_ids

    package = json.loads((EXTENSION / "package.json").read_text())
    languages = package["contributes"]["configuration"]["properties"]["dcomplete.languages"]["default"]
    assert languages == editor_language_ids()
    assert package["activationEvents"] == [f"onLanguage:{language}" for language in languages]
    fallback = (EXTENSION / "src" / "settings.ts").read_text().split("DEFAULT_LANGUAGES = [", 1)[1].split("]")[0]
    assert re.findall(r'"([^"]+)"', fallback) == languages
