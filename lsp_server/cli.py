"""`dcomplete serve` / `python -m lsp_server`: start the language server on stdio or loopback TCP."""

from __future__ import annotations

import argparse
import logging
import os
import sys


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dcomplete serve",
        description="Language server for diffusion-model code completion (stdio by default).",
    )
    parser.add_argument(
        "--tcp", type=int, metavar="PORT", help="listen on 127.0.0.1:PORT instead of stdio (for debugging)"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="with --tcp: the address to bind (default loopback only; the "
        "protocol has no authentication, so anyone who can connect can read the documents sent to it)"
    )
    parser.add_argument("--log-file", metavar="PATH", help="write the server log here (stderr otherwise)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return parser


def _use_uvloop() -> None:
    try:
        import uvloop
    except ImportError:
        return
    uvloop.install()


def _default_cpu_threads() -> None:
    """Half the cores for torch on CPU unless OMP_NUM_THREADS says otherwise (set before torch loads).

    The server shares the machine with the editor. When every core is busy, OpenMP threads spinning at
    barriers made a forward pass of the bundled model 40x slower (2 threads on a loaded 2-core box:
    ~670 ms against ~18 ms with one thread)."""
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 2) // 2)))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    logging.basicConfig(
        handlers=[handler],
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    _use_uvloop()
    _default_cpu_threads()
    from .server import build_server

    server = build_server()
    if args.tcp is not None:
        if args.host not in ("127.0.0.1", "::1", "localhost"):
            logging.getLogger(__name__).warning("listening on %s:%d, reachable from other machines", args.host, args.tcp)
        server.start_tcp(args.host, args.tcp)
    else:
        from .wire import ResyncingStdin

        server.start_io(stdin=ResyncingStdin(sys.stdin.buffer))  # type: ignore[arg-type]
    return 0
