"""The `dcomplete` command line: argparse with one module per subcommand.

Exit status: 0 success, 2 bad input (one line on stderr naming it, no file touched), 1 internal
error (or a failed `--check`).

Subcommands register through `SUBCOMMANDS`: a module with `register(subparsers)` adds its own parser
and sets `run=<function(args) -> int>`; a module given with a name and a help line instead runs as
`module.main(argv)` with the rest of the command line (the LSP server keeps its own parser). A
module that is not installed (an optional component) is skipped.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence

from infill.files import BadInput

SUBCOMMANDS: tuple[tuple[str, str | None, str | None], ...] = (
    ("cli.infill_command", None, None),
    ("cli.refactor_command", None, None),
    ("cli.next_edit_command", None, None),
    ("cli.engine_command", None, None),
    (
        "lsp_server.cli",
        "serve",
        "run the language server (stdio, or --tcp PORT); see `dcomplete serve --help`",
    ),
)

EPILOG = """examples:
  dcomplete infill app.py:40-55                 print a patch that regenerates lines 40-55
  dcomplete infill app.py:12 --write            rewrite line 12 in place
  dcomplete infill app.py:12 --json --seed 3    the edit as JSON (LSP positions, token ids, stats)
  dcomplete refactor src --holes --write        fill every `# <|hole|>` line under src/
  dcomplete refactor a.py b.py --function-regex '^test_' --check 'pytest -q'
  dcomplete next-edit app.py                    the edit your last change to app.py implies elsewhere
  dcomplete engine --port 8765                  serve the engine over HTTP to many editors
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dcomplete",
        description="Code completion and multi-spot infill with a diffusion language model.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name, name, help_line in SUBCOMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module_name.startswith(exc.name):
                continue
            raise
        if name is None:
            module.register(subparsers)
            continue
        sub = subparsers.add_parser(name, help=help_line, add_help=False)
        sub.add_argument("argv", nargs=argparse.REMAINDER)
        sub.set_defaults(run=lambda args, main=module.main: main(args.argv))
    return parser


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _terminate)
    arguments = list(sys.argv[1:] if argv is None else argv)
    for module_name, name, _ in SUBCOMMANDS:
        if name is not None and arguments[:1] == [name]:
            return int(importlib.import_module(module_name).main(arguments[1:]))
    parser = build_parser()
    args = parser.parse_args(arguments)
    if getattr(args, "run", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.run(args))
    except BadInput as exc:
        print(f"dcomplete: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dcomplete: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except ConnectionError as exc:  # the engine server (--engine-url) failed; the sentence names it
        print(f"dcomplete: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        import traceback

        if os.environ.get("DCOMPLETE_DEBUG"):
            traceback.print_exc()
        print(f"dcomplete: internal error: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 1


QUICK_EXIT = ("infill",)
"""Commands that leave nothing behind when they return (the file is written, the output printed): their
process skips the interpreter's teardown, which spends 0.8 s freeing torch's state on a 2-core CPU, a
seventh of a one-line `dcomplete infill`."""


def entry() -> None:
    """The `dcomplete` command line: `main`, then the exit."""
    code = main()
    if sys.argv[1:2] and sys.argv[1] in QUICK_EXIT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # the reader went away: its output is lost either way
            code = code or 1
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
