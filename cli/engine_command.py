"""`dcomplete engine`: serve the engine over HTTP (see `remote.server`)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sys

from infill.files import BadInput

HELP = """Serve one engine to many editors over HTTP: OpenAI /v1/completions (with suffix),
/v1/fim/completions, llama.cpp /infill, the native multi-spot /v1/infill, and /health, /v1/models,
/v1/engine, /metrics. Requests share the engine's batch: they join the running batch between two
denoising steps and leave it when they are done.

Binds loopback by default. Any other host needs --api-key (or DCOMPLETE_API_KEY): every request but
/health must then carry 'Authorization: Bearer <key>'.

With --ray, N replicas of the same server run on a Ray cluster behind one Ray Serve ingress, which
sends each document's requests to the replica holding its cache (docs/engine-server.md).

examples:
  dcomplete engine                                  the bundled model on http://127.0.0.1:8765
  dcomplete engine --model ./ckpt --device cuda --host 0.0.0.0 --api-key "$KEY"
  dcomplete engine --ray --replicas 2               two replicas on a local Ray cluster
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("engine", help="serve the engine over HTTP to many editors",
                                   description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default", help="checkpoint folder, HF repo id in the local cache, or 'default'")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1, ... (default: cuda when present)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: any free one; the URL is printed)")
    parser.add_argument("--api-key", default=os.environ.get("DCOMPLETE_API_KEY"),
                        help="bearer token requests must carry (default: $DCOMPLETE_API_KEY)")
    parser.add_argument("--max-queue", type=int, default=64, help="rows that may wait for the engine (then 503)")
    parser.add_argument("--max-batch", type=int, default=16, help="rows running at once in the engine's batch")
    parser.add_argument("--no-batching", action="store_true", help="serve requests one at a time")
    parser.add_argument("--max-body", type=int, default=4_000_000, help="request bytes accepted (then 413)")
    group = parser.add_argument_group("replicas on Ray Serve")
    group.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="serve N replicas on a Ray cluster; ADDRESS defaults to $DCOMPLETE_RAY_ADDRESS, then "
                            "Ray's own (a cluster started on this machine, else a local one for this process)")
    group.add_argument("--replicas", type=int, default=2, metavar="N", help="engine replicas (default 2)")
    group.add_argument("--ray-gpus-per-replica", type=float, default=0.0, metavar="G",
                       help="GPUs each replica reserves (default 0; >0 loads on cuda unless --device)")
    group.add_argument("--ray-cpus-per-replica", type=float, default=1.0, metavar="C",
                       help="CPUs each replica reserves (default 1)")
    group.add_argument("--no-affinity", action="store_true",
                       help="send every request to the least loaded replica (for comparison)")
    parser.set_defaults(run=run)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise BadInput(f"--host {host} --port {port}: cannot bind: {exc.strerror or exc}") from None
    # listening before the app starts: connections made as soon as the URL is printed (at startup,
    # before uvicorn serves the socket) wait in the backlog instead of being refused
    sock.listen(2048)
    return sock


def run(args: argparse.Namespace) -> int:
    if not is_loopback(args.host) and not args.api_key:
        raise BadInput(f"--host {args.host} is not a loopback address: give --api-key (or DCOMPLETE_API_KEY) "
                       "so that only clients holding the key are served")
    for flag, value, least in (("--max-queue", args.max_queue, 1), ("--max-batch", args.max_batch, 1),
                               ("--max-body", args.max_body, 1), ("--port", args.port, 0 if args.ray is None else 1),
                               ("--replicas", args.replicas, 1), ("--ray-gpus-per-replica", args.ray_gpus_per_replica, 0),
                               ("--ray-cpus-per-replica", args.ray_cpus_per_replica, 0)):
        if value < least:
            raise BadInput(f"{flag} {value}: must be at least {least}")
    if args.ray is not None:
        return _run_on_ray(args)
    sock = _bind(args.host, args.port)

    import uvicorn

    from cli.common import load_engine
    from engine.batcher import BatcherConfig
    from remote.server.app import EngineServer, ServerConfig, build_app

    args.verbose = False
    engine = load_engine(args)
    names = tuple(dict.fromkeys((engine.name, args.model)))
    config = ServerConfig(names, args.api_key, args.max_body,
                          BatcherConfig(max_queue=args.max_queue, max_rows=args.max_batch, batching=not args.no_batching))
    server = EngineServer(engine, config)
    host, port = sock.getsockname()[:2]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"

    def ready() -> None:
        batching = "off" if args.no_batching else f"up to {args.max_batch} rows"
        print(f"dcomplete engine: serving {engine.name} ({engine.family}, {engine.device}) on {url}; "
              f"batching {batching}", file=sys.stderr, flush=True)
        if args.api_key:
            print("dcomplete engine: requests must carry 'Authorization: Bearer <key>'", file=sys.stderr, flush=True)

    app = build_app(server, ready)
    # h11, not httptools (which ray[serve] installs and uvicorn would then pick): httptools answers a malformed
    # request line with a bare text 400, accepts a request without Host and leaves a blank request hanging
    uv = uvicorn.Server(uvicorn.Config(app, loop="uvloop", http="h11", log_level="warning", lifespan="on",
                                       access_log=False))
    uv.run(sockets=[sock])
    return 0


def _run_on_ray(args: argparse.Namespace) -> int:
    from engine.batcher import BatcherConfig
    from remote.serve.ingress import IngressSettings
    from remote.serve.launch import ServeOptions, ray_address, serve_until_stopped
    from remote.serve.routing import RoutingConfig
    from remote.server.app import ServerConfig

    config = ServerConfig((args.model,), args.api_key, args.max_body,
                          BatcherConfig(max_queue=args.max_queue, max_rows=args.max_batch, batching=not args.no_batching))
    options = ServeOptions(ray_address(args.ray), args.replicas, args.ray_gpus_per_replica,
                           args.ray_cpus_per_replica, args.model, args.device, args.host, args.port, config,
                           IngressSettings(args.api_key, RoutingConfig(affinity=not args.no_affinity)))

    def ready(url: str) -> None:
        print(f"dcomplete engine: serving {args.model} as {args.replicas} replicas on Ray on {url}; "
              f"routing {'by document' if not args.no_affinity else 'to the least loaded'}", file=sys.stderr, flush=True)
        if args.api_key:
            print("dcomplete engine: requests must carry 'Authorization: Bearer <key>'", file=sys.stderr, flush=True)

    return serve_until_stopped(options, ready)
