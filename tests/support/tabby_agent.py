"""`tabby-agent` (the LSP agent behind Tabby's editor plugins) from npm, pinned, installed once per machine
into a cache folder outside the repository, and its home folder pointed at a `dcomplete engine`.

1.5.0 is the version this project's npm registry serves (`npm view tabby-agent versions`): its language
server mode (`tabby-agent --lsp --stdio`) answers `textDocument/completion`; `inlineCompletion` is a TODO in
its `LspServer.ts` (TabbyML/tabby commit 3c12cc1, the 1.5.0 release). Its config file is
`~/.tabby-client/agent/config.toml`; a token keeps it from creating its cloud login helper, and anonymous
usage tracking is off, so the agent talks to the loopback engine only.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

VERSION = "1.5.0"
INSTALL_TIMEOUT_S = 600


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dcomplete" / f"tabby-agent-{VERSION}"


def install() -> Path:
    """The agent's entry script, installed into `cache_dir()` unless an earlier run finished there. Test
    sessions running at once on one machine take turns (a lock file beside the folder)."""
    for tool in ("node", "npm"):
        assert shutil.which(tool), f"`{tool}` is not on PATH: the tabby-agent test needs Node.js >= 18 and npm"
    root = cache_dir()
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / f"{root.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        script = root / "node_modules" / "tabby-agent" / "dist" / "cli.js"
        if (root / ".installed").is_file():
            return script
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        command = ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", f"tabby-agent@{VERSION}"]
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                              check=False)
        assert done.returncode == 0 and script.is_file(), f"`{' '.join(command)}` failed:\n{done.stderr[-3000:]}"
        (root / ".installed").write_text(VERSION)
        return script


def write_config(home: Path, config: str) -> Path:
    """`config` (the text of a config.toml) as the agent's config file in `home` (its `$HOME`)."""
    path = home / ".tabby-client" / "agent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config)
    return path
