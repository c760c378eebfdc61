"""code-server (VS Code served to a browser, from npm) and Chromium (Debian) for the VS Code end-to-end
test, installed once per machine into a cache folder outside the repository, and a code-server process
with its own user-data and extensions folders.

code-server's npm install builds VS Code's native modules on the spot and, through @vscode/ripgrep,
downloads ripgrep from GitHub, which these machines cannot reach. So the install runs without scripts,
puts Debian's `rg` where @vscode/ripgrep keeps its binary, and then runs the build scripts (`npm
rebuild`) and code-server's own postinstall, which then finds ripgrep present and skips the download.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vscode_build import run

CODE_SERVER_VERSION = "4.100.3"  # VS Code 1.100.3; the last line of releases that runs on Node 20
# Debian package -> a file it installs. ripgrep stands in for the download above; libkrb5-dev is what
# the `kerberos` native module compiles against.
SYSTEM_PACKAGES = {
    "chromium": "/usr/lib/chromium/chromium",
    "ripgrep": "/usr/bin/rg",
    "libkrb5-dev": "/usr/bin/krb5-config",
}
CHROMIUM = SYSTEM_PACKAGES["chromium"]
INSTALL_TIMEOUT_S = 900


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dcomplete" / f"code-server-{CODE_SERVER_VERSION}"


def ensure_system_packages() -> None:
    """Installs the missing Debian packages with apt-get when running as root (as CI does)."""
    missing = [name for name, marker in SYSTEM_PACKAGES.items() if not Path(marker).exists()]
    if not missing:
        return
    command = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
    assert os.geteuid() == 0, (
        f"missing Debian packages {', '.join(missing)}: run `sudo {' '.join(command)}` "
        "(the test installs them itself when it runs as root)"
    )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(command, check=False, capture_output=True, env=env).returncode != 0:
        run(["apt-get", "update"], Path("/"), INSTALL_TIMEOUT_S, env)
        run(command, Path("/"), INSTALL_TIMEOUT_S, env)


def install_code_server() -> Path:
    """The code-server executable, installed into `cache_dir()` unless an earlier run finished there.
    Test sessions running at once on one machine take turns (a lock file beside the folder)."""
    root = cache_dir()
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / f"{root.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _install(root)


def _install(root: Path) -> Path:
    binary = root / "node_modules" / ".bin" / "code-server"
    stamp = root / ".installed"
    if stamp.is_file():
        return binary
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    # Root runs npm scripts as itself since npm 7; code-server's postinstall still asks for the old flag.
    # npm_config_yes: node-pty's install script runs `npx node-gyp`, which would ask before installing.
    # JOBS: node-gyp compiles each native module with `make -j` over every core.
    env = {**os.environ, "npm_config_yes": "true", "npm_config_unsafe_perm": "true", "JOBS": "max"}
    quiet = ["--no-audit", "--no-fund"]
    run(["npm", "install", "--ignore-scripts", *quiet, f"code-server@{CODE_SERVER_VERSION}"], root, 300, env)
    package = root / "node_modules" / "code-server"
    vscode = package / "lib" / "vscode"
    run(["npm", "install", "--omit=dev", "--ignore-scripts", *quiet], vscode, 300, env)
    ripgrep = vscode / "node_modules" / "@vscode" / "ripgrep" / "bin"
    ripgrep.mkdir(parents=True, exist_ok=True)
    (ripgrep / "rg").symlink_to(SYSTEM_PACKAGES["ripgrep"])
    run(["npm", "rebuild"], vscode, INSTALL_TIMEOUT_S, env)
    run(["npm", "run", "postinstall"], package, INSTALL_TIMEOUT_S, env)
    run(["npm", "rebuild", "argon2"], root, 300, env)
    version = run([str(binary), "--version"], root, 60)
    assert CODE_SERVER_VERSION in version, version
    stamp.write_text(version)
    return binary


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class CodeServer:
    """A running code-server; its output goes to `log`."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path

    @classmethod
    def start(
        cls,
        binary: Path,
        home: Path,
        workspace: Path,
        vsix: Path,
        settings: dict[str, Any],
        env: dict[str, str],
    ) -> CodeServer:
        """Installs `vsix` into fresh folders under `home`, writes the user `settings`, and serves
        `workspace` on 127.0.0.1 without authentication."""
        folders = [
            "--user-data-dir", str(home / "user-data"),
            "--extensions-dir", str(home / "extensions"),
            "--config", str(home / "config.yaml"),
        ]  # fmt: skip
        installed = run([str(binary), *folders, "--install-extension", str(vsix)], home, 120, env)
        assert "was successfully installed" in installed, installed
        user = home / "user-data" / "User"
        user.mkdir(parents=True, exist_ok=True)
        (user / "settings.json").write_text(json.dumps(settings, indent=2))
        port = free_port()
        log = home / "code-server.log"
        command = [
            str(binary), *folders,
            "--bind-addr", f"127.0.0.1:{port}", "--auth", "none",
            "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
            "--disable-getting-started-override", str(workspace),
        ]  # fmt: skip
        with log.open("wb") as sink:
            process = subprocess.Popen(
                command, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=home, start_new_session=True
            )
        server = cls(process, f"http://127.0.0.1:{port}/", log)
        server.wait_until_healthy(60)
        return server

    def wait_until_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"code-server exited; its log: {self.log}"
            try:
                with urllib.request.urlopen(self.url + "healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(
            f"code-server did not answer {self.url}healthz in {timeout_s:.0f} s; log: {self.log}"
        )

    def close(self) -> None:
        """Stops code-server and what it started (extension host, language server): its own session."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)


def drive(
    binary: Path, home: Path, workspace: Path, vsix: Path, settings: dict[str, Any], driver: Path,
    plan: dict[str, Any],
) -> tuple[dict[str, Any], str]:
    """Serves `workspace` from a fresh code-server under `home` with `vsix` installed and the user
    `settings`, runs the node `driver` (a compiled test/e2e/*.e2e.js) on `plan` (its `url`, `chromium` and
    `report` filled in here), stops code-server, and returns the driver's report and a line naming the logs
    (code-server's and any other `*.log` in `home`, and the extension's).
    Accept/reject feedback goes to `home`/state/dcomplete/feedback.jsonl."""
    env = {**os.environ, "XDG_STATE_HOME": str(home / "state"), "OMP_NUM_THREADS": "1"}
    server = CodeServer.start(binary, home, workspace, vsix, settings, env)
    try:
        plan = {**plan, "url": f"{server.url}?folder={workspace}", "chromium": CHROMIUM,
                "report": str(home / "report.json")}
        (home / "plan.json").write_text(json.dumps(plan))
        drove = subprocess.run(
            ["node", str(driver), str(home / "plan.json")], check=False, capture_output=True, text=True, timeout=600
        )
    finally:
        server.close()
    client_logs = [str(p) for p in home.glob("user-data/logs/*/exthost*/dcomplete.dcomplete/*.log")]
    logs = f"logs: {[str(p) for p in sorted(home.glob('*.log'))]}; extension log: {client_logs}"
    assert drove.returncode == 0, f"{drove.stderr.strip()[-3000:]}\n{logs}"
    return json.loads(Path(plan["report"]).read_text()), logs
