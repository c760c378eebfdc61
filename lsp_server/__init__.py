"""dcomplete's language server: LSP in, `infill` calls out. Holds no model code.

Run it with `dcomplete serve` or `python -m lsp_server`; the README's "Language server" section documents it.
"""

from __future__ import annotations

from lsp_server.version import __version__


def main(argv: list[str] | None = None) -> int:
    """Entry point for `dcomplete serve` (argv excludes the subcommand)."""
    from .cli import main as run

    return run(argv)


__all__ = ["__version__", "main"]
