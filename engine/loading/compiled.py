"""Compiled int8 decoding products (`engine.kernels.compiled_int8`) for a loaded model, built off the user's path.

A load with `compiled` on serves at once on the kernels it has. Meanwhile, on a thread of its own, it makes
the int8 form of every fused product's decoding weight (the LoRA added in), and unless this machine already
built them it writes them to the cache folder and starts a subprocess at the lowest priority
(`engine.loading.compile_build`) that compiles every product there, leaving the code in inductor's cache in
the same folder. Compiling in a subprocess, not a thread: it is a minute of Python, which on a thread of the
engine's process would hold the interpreter's lock against the thread that serves (bench.compiled_background
measures both). Once built, the thread that runs the engine loads the products from that cache when it is
idle, one per piece (`BackgroundCompile.step`, from `Engine.calibrate_step`, after any calibration), checks
each against the eager int8 product and for row invariance, and swaps them all in at once after the last.

The folder (`compiled/<key>` under the cache root) is keyed by the CPU's name and the instruction sets that
change inductor's code (AVX2, AVX-512, AMX flags), torch's version, the thread count and the digest of the
int8 weights, so another machine or model builds its own. Whatever goes wrong (no C++ compiler, no AVX-512,
a compile that fails, an entry that does not load or check) is one logged line, and the engine keeps its
eager kernels; an entry that fails to load or check is removed and built once more.

`compiled`: `off` (the default), `int8` (wherever AVX-512 and a C++ compiler are), `auto` (only with AMX
tiles as well, where it was measured faster); `DCOMPLETE_COMPILED` sets it for loads that do not say.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Literal

import torch

from engine.kernels.compiled_int8 import Int8Weight
from engine.kernels.projections import MAX_TABLE_ROWS, FusedProjections
from engine.models.transformer import Transformer
from engine.types import ModelLoadError

logger = logging.getLogger(__name__)

Compiled = Literal["off", "int8", "auto"]
MODES: tuple[Compiled, ...] = ("off", "int8", "auto")
MODE_ENV = "DCOMPLETE_COMPILED"
FORMAT = 1
WEIGHTS, MANIFEST, INDUCTOR, LOG = "weights.safetensors", "built.json", "inductor", "build.log"
ISA_PREFIXES = ("avx2", "avx512", "amx")
POLL_S = 0.1  # how long an idle piece waits for the build before it hands the thread back
CHECK_ROWS = MAX_TABLE_ROWS
TOLERANCE = 1e-4
"""Max abs difference over the reference's max abs value allowed between a compiled product and its eager
float32 form (`Int8Weight.reference`): both multiply the same bfloat16-rounded rows by the same int8 codes,
and differ by the order of float32 sums only (measured 1e-7 on the tiny model's products); a product that
loaded another weight's code is off by the size of the weights."""


def mode_of(asked: str | None) -> Compiled:
    """The mode a load runs: `asked`, else `DCOMPLETE_COMPILED`, else off; raises ModelLoadError naming a
    value that is none of `MODES`."""
    value = asked if asked is not None else os.environ.get(MODE_ENV, "") or "off"
    if value not in MODES:
        raise ModelLoadError(f"compiled {value!r}: use one of {', '.join(MODES)}")
    return value


def cpu_flags() -> list[str]:
    """This CPU's flags that change inductor's generated code."""
    from engine.loading.tuning import all_cpu_flags

    return sorted(flag for flag in all_cpu_flags() if flag.startswith(ISA_PREFIXES))


def machine() -> dict[str, Any]:
    """What a build depends on besides the weights."""
    from engine.loading.tuning import cpu_name

    return {"cpu": cpu_name(), "flags": cpu_flags(), "torch": torch.__version__,
            "threads": torch.get_num_threads(), "format": FORMAT}


def unsupported(mode: Compiled) -> str | None:
    """Why `mode` builds nothing on this machine, or None."""
    flags = cpu_flags()
    if not any(f.startswith("avx512") for f in flags):
        return "this CPU has no AVX-512 (inductor's int8 GEMM template needs it)"
    if mode == "auto" and not any(f.startswith("amx") for f in flags):
        return "this CPU has no AMX tiles (auto compiles only where that was measured faster)"
    compiler = os.environ.get("CXX", "g++")  # what inductor runs (its `cpp.cxx`)
    if shutil.which(compiler) is None:
        return f"no C++ compiler ({compiler})"
    return None


def decoding_weight(p: FusedProjections) -> torch.Tensor:
    """The weight a decoding step multiplies by: the base with the LoRA's update added in."""
    if p.up is None:
        return p.weight.detach().float()
    return torch.addmm(p.weight, p.up, p._full[p.width :], alpha=p.scale).float()


def digest(weights: list[Int8Weight]) -> str:
    found = hashlib.sha256()
    for w in weights:
        for t in (w.codes, w.scales):
            found.update(str(tuple(t.shape)).encode())
            found.update(t.contiguous().view(torch.uint8).numpy().tobytes())
    return found.hexdigest()


def folder_for(weights_digest: str) -> Path:
    from engine.loading.gguf_base import cache_root

    what = json.dumps({**machine(), "weights": weights_digest}, sort_keys=True)
    return cache_root() / "compiled" / hashlib.sha256(what.encode()).hexdigest()[:24]


def write_weights(folder: Path, weights: list[Int8Weight]) -> None:
    from safetensors.torch import save_file

    tensors = {f"{i}.{name}": t for i, w in enumerate(weights) for name, t in (("codes", w.codes),
                                                                                  ("scales", w.scales))}
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f"{WEIGHTS}.{os.getpid()}.tmp"
    save_file(tensors, str(temp))
    temp.replace(folder / WEIGHTS)


def read_weights(folder: Path) -> list[Int8Weight]:
    from safetensors.torch import load_file

    tensors = load_file(str(folder / WEIGHTS))
    return [Int8Weight(tensors[f"{i}.codes"], tensors[f"{i}.scales"]) for i in range(len(tensors) // 2)]


def manifest(weights_digest: str, count: int) -> dict[str, Any]:
    """What a finished build writes, and what a load expects to read."""
    return {**machine(), "weights": weights_digest, "products": count}


def built(folder: Path, expected: dict[str, Any]) -> bool:
    try:
        return bool(json.loads((folder / MANIFEST).read_text()) == expected)
    except (OSError, ValueError):
        return False


def check(weight: Int8Weight, product: Any) -> str | None:
    """What is wrong with a compiled product of `weight` (rows beside others get other bits than alone, or
    it is not the eager int8 product), or None."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(1, CHECK_ROWS, weight.codes.shape[1], generator=generator)
    with torch.inference_mode():
        together = product(x)
        alone = torch.cat([product(x[:, i : i + 1].contiguous()) for i in range(CHECK_ROWS)], 1)
        ref = weight.reference(x)
    if not torch.equal(together, alone):
        return "a row's bits change with the rows beside it"
    error = ((together - ref).abs().max() / ref.abs().max().clamp(min=1e-30)).item()
    return None if error <= TOLERANCE else f"off the eager int8 product by {error:.2g} of its scale"


def compiled_products(model: Transformer) -> list[FusedProjections]:
    """The products the compiled kernel runs: the blocks', not the head. The head is 1.3 ms of a 30 ms step,
    and its int8 logits changed greedy tokens: bench.speed --compiled --cases 6 (2 threads, AMX Xeon) agreed
    with the eager engine 1.000 / 0.978 / 0.703 / 0.697 over line / 16 / 32 / 64-token spans with it compiled,
    1.000 / 1.000 / 0.703 / 0.815 without."""
    head = getattr(model, "head", None)
    return [p for p in model.products() if p is not head]


class BackgroundCompile:
    """The compiled products of `model`: built by a thread and a subprocess, then loaded, checked and swapped
    in by `step` on the engine's thread."""

    def __init__(self, model: Transformer) -> None:
        self.products = compiled_products(model)
        self.problem: str | None = None
        self.swapped = False
        self._weights: list[Int8Weight] = []
        self._expected: dict[str, Any] = {}
        self._folder: Path | None = None
        self._loaded: list[Any] = []
        self._warm_ups: list[Any] | None = None
        self._retried = False
        self._process: subprocess.Popen[bytes] | None = None
        self._done = threading.Event()
        self._start()

    def _start(self) -> None:
        self._done.clear()
        threading.Thread(target=self._build, name="dcomplete-compiled-build", daemon=True).start()

    def _build(self) -> None:
        try:
            if not self._weights:
                self._weights = [Int8Weight.of(decoding_weight(p)) for p in self.products]
                weights_digest = digest(self._weights)
                self._folder = folder_for(weights_digest)
                self._expected = manifest(weights_digest, len(self._weights))
            assert self._folder is not None
            if not built(self._folder, self._expected):
                # inductor's cache stays: the build checks every product it loads from there
                (self._folder / MANIFEST).unlink(missing_ok=True)
                write_weights(self._folder, self._weights)
                self._run_build(self._folder)
                if not built(self._folder, self._expected):
                    raise RuntimeError(f"the build wrote no manifest that fits (see {self._folder / LOG})")
        except Exception as exc:
            self.problem = f"building them failed ({exc})"
        finally:
            self._done.set()

    def _run_build(self, folder: Path) -> None:
        with open(folder / LOG, "wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "engine.loading.compile_build", str(folder)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=Path(__file__).resolve().parents[2],
                env={**os.environ, "DCOMPLETE_COMPILED_THREADS": str(self._expected["threads"])})
            _running.add(self._process)
            try:
                code = self._process.wait()
            finally:
                _running.discard(self._process)
        if code != 0:
            tail = (folder / LOG).read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"exit {code}: {tail[0][:200]}")

    @property
    def building(self) -> bool:
        return not self._done.is_set()

    def step(self) -> bool:
        """One piece on the engine's thread: wait up to POLL_S for the build, or load and check one product,
        or (after the last) swap them all in. Returns whether pieces remain; a problem is logged once and
        leaves the eager kernels serving."""
        if not self._done.wait(POLL_S):
            return True
        if self.problem is not None:
            logger.warning("compiled products: %s; serving on the eager kernels", self.problem)
            return False
        try:
            if self._warm_ups is None:
                from engine.kernels.compiled_int8 import warm_ups

                self._warm_ups = warm_ups()
            if self._warm_ups:
                self._warm_ups.pop(0)()
                return True
            self._load_one()
        except Exception as exc:
            return self._failed(f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"
                                if str(exc).strip() else type(exc).__name__)
        if len(self._loaded) < len(self.products):
            return True
        for product, compiled in zip(self.products, self._loaded):
            product.compiled = compiled
        self.swapped = True
        logger.info("compiled products: %d in use (%s)", len(self._loaded), self._folder)
        return False

    def _load_one(self) -> None:
        from engine.kernels.compiled_int8 import compile_product, inductor_settings

        assert self._folder is not None
        weight = self._weights[len(self._loaded)]
        with inductor_settings(self._folder / INDUCTOR, cached_only=True):
            compiled = compile_product(weight)
        wrong = check(weight, compiled)
        if wrong is not None:
            raise ValueError(f"product {len(self._loaded)}: {wrong}")
        self._loaded.append(compiled)

    def _failed(self, why: str) -> bool:
        """A built entry that does not load or check: removed with inductor's cache, and built once more."""
        self._loaded = []
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
        if self._retried:
            logger.warning("compiled products: the rebuilt entry failed too (%s); serving on the eager kernels", why)
            return False
        logger.warning("compiled products: the kept entry failed (%s); building it again", why)
        self._retried = True
        self._start()
        return True

    def close(self) -> None:
        """Stop a build still running (the next load starts it again, on what inductor's cache kept)."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()


def start(model: Transformer, device: torch.device, engine_kernels: bool, asked: str | None) -> BackgroundCompile | None:
    """The background build for a load, or None: `compiled` off, not a CPU load of the engine's kernels, or
    a machine that cannot build them (one logged line)."""
    mode = mode_of(asked)
    if mode == "off" or device.type != "cpu" or not engine_kernels or not model.products():
        return None
    why = unsupported(mode)
    if why is not None:
        logger.warning("compiled products (%s): %s; serving on the eager kernels", mode, why)
        return None
    return BackgroundCompile(model)


_running: set[subprocess.Popen[bytes]] = set()


@atexit.register
def _stop_builds() -> None:
    for process in list(_running):
        if process.poll() is None:
            process.terminate()
