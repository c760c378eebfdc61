"""Keep freed memory in the process on glibc, so that a CPU forward's large buffers are not page-faulted in
afresh on every layer.

glibc serves an allocation above its mmap threshold with a fresh mapping and trims free memory at the top
of its heap above twice that threshold; both thresholds follow the sizes freed so far. A prefill's
temporaries (a 900-token canvas: 5-11 MB per product output, per layer) fell on the wrong side of them:
every layer's buffers came back as new pages, and a multi-gap prefill took 45,000-175,000 minor page
faults (200-600 MB zeroed by the kernel) and 0.40-0.54 s where the same forward takes 0.36-0.40 s without
them (2-core Xeon, bench.multispot's canvases). Fixed thresholds (mapped only above 32 MiB, trimmed only
above 256 MiB free) bring it to none after a request or two, at the price of the process keeping up to
that much freed memory per arena. Setting either `MALLOC_MMAP_THRESHOLD_` or `MALLOC_TRIM_THRESHOLD_` in
the environment, or preloading another allocator (jemalloc, tcmalloc, mimalloc), leaves the choice to the user.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys

M_TRIM_THRESHOLD = -1  # mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's largest accepted value on 64-bit
TRIM_THRESHOLD = 256 << 20
USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
KERNEL_CACHE = "64"
"""How many compiled products oneDNN and its ideep wrapper keep (each its own cache, default 1,024). A
bfloat16 attention product is compiled per key count (`engine.cache.kv_dtype`), about 0.8 MB each: a server
taking requests of changing lengths grew by 1 GB in 2,000 requests (tests/fuzz/test_http_fuzz.py). Making
one again costs about 0.5 ms."""


@functools.cache
def keep_freed_memory() -> bool:
    """Set the fixed thresholds once per process; whether they are in effect (False off glibc, or where
    the user chose an allocator or thresholds)."""
    chosen = any(os.environ.get(name) for name in USER_SETTINGS) or "malloc" in os.environ.get("LD_PRELOAD", "")
    if not sys.platform.startswith("linux") or chosen:
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (musl has no libc.so.6)
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def bound_kernel_caches() -> None:
    """Cap oneDNN's caches of compiled products at KERNEL_CACHE unless the environment sets them. Read when
    oneDNN first runs a product in the process: call before a model loads."""
    for name in ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY"):
        os.environ.setdefault(name, KERNEL_CACHE)
