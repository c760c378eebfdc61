"""`dcomplete engine --ray`: deploy the replicas and their ingress as one Ray Serve application, print the
URL, and keep it until this process is stopped (then the application is deleted).

Layout: N deployments `engine-0` … `engine-<N-1>` of one replica each (`remote.serve.replica`), so that
the ingress can address a replica by its index, and the `ingress` deployment (`remote.serve.ingress`)
that Serve's HTTP proxy sends every request to. Ray Serve restarts a replica whose actor dies; the
ingress leaves it out meanwhile.
"""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass
from typing import Any

from infill.files import BadInput
from remote.ray_refactor import connect, first_line, import_ray
from remote.serve.ingress import Ingress, IngressSettings
from remote.serve.replica import EngineReplica
from remote.server.app import ServerConfig

APP = "dcomplete"


@dataclass(frozen=True)
class ServeOptions:
    """address None: Ray's own default (a cluster on this machine, else a new local one for this process)."""

    address: str | None
    replicas: int
    gpus_per_replica: float
    cpus_per_replica: float
    model: str
    device: str | None
    host: str
    port: int
    server: ServerConfig
    ingress: IngressSettings


def ray_address(given: str | None) -> str | None:
    return given or os.environ.get("DCOMPLETE_RAY_ADDRESS") or None


def deploy(options: ServeOptions) -> tuple[Any, str]:
    """Connect, start Serve's proxy on host:port and run the application; (ray, URL) once every replica
    has loaded the model. A model that does not load, or a cluster that cannot be reached, is BadInput."""
    ray = import_ray()
    try:
        from ray import serve
    except ImportError:
        raise BadInput("--ray needs Ray Serve: pip install 'dcomplete[serve]'") from None
    if not ray.is_initialized():
        connect(ray, options.address)
    model = os.path.abspath(options.model) if os.path.exists(options.model) else options.model
    device = options.device or ("cuda" if options.gpus_per_replica else None)
    queue = options.server.batcher.max_queue + options.server.batcher.max_rows
    replica: Any = serve.deployment(EngineReplica)
    engines = [
        replica.options(name=f"engine-{i}", num_replicas=1, max_ongoing_requests=queue + 4,
                        graceful_shutdown_timeout_s=5,
                        ray_actor_options={"num_cpus": options.cpus_per_replica,
                                           "num_gpus": options.gpus_per_replica})
        .bind(model, device, options.server)
        for i in range(options.replicas)
    ]
    router: Any = serve.deployment(Ingress)
    ingress = router.options(
        name="ingress", num_replicas=1, max_ongoing_requests=options.replicas * (queue + 4),
        graceful_shutdown_timeout_s=5, ray_actor_options={"num_cpus": 0}
    ).bind(engines, options.ingress)
    try:
        serve.start(http_options={"host": options.host, "port": options.port}, proxy_location="HeadOnly")
        serve.run(ingress, name=APP, route_prefix="/")
    except (RuntimeError, ValueError) as exc:
        raise BadInput(f"--ray: the replicas did not start: {first_line(exc)}") from None
    host = options.host
    return ray, f"http://{'[' + host + ']' if ':' in host else host}:{options.port}"


def serve_until_stopped(options: ServeOptions, ready: Any) -> int:
    """Deploy, call `ready(url)`, and wait for SIGINT or SIGTERM; then delete the application."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    ray, url = deploy(options)
    from ray import serve

    try:
        ready(url)
        stop.wait()
    finally:
        serve.delete(APP)
        ray.shutdown()
    return 0
