"""A local Ray cluster on loopback for a test module: two CPUs, no dashboard, a small object store.

    with local_cluster() as address:   # the GCS address other drivers (a CLI subprocess) connect to
        ...
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def local_cluster() -> Iterator[str]:
    import ray  # make setup installs the ray extra

    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 * 2**20, logging_level="ERROR")
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
