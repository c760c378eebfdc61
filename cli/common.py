"""Options and output shared by the `infill` and `refactor` subcommands."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from infill.files import BadInput
from infill.fill import FillOptions, FillResult
from infill.languages import LanguageSpec, UnsupportedLanguage, language_for_file
from infill.positions import LineIndex

if TYPE_CHECKING:
    from infill.context import Builders

_IMPORTED = time.perf_counter()

def add_engine_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model and sampler")
    group.add_argument(
        "--model", default="default", help="checkpoint folder, HF repo id in the local cache, or 'default'"
    )
    group.add_argument("--device", default=None, help="cpu, cuda, cuda:1, ... (default: cuda when present)")
    group.add_argument(
        "--engine-url", default=os.environ.get("DCOMPLETE_ENGINE_URL") or None, metavar="URL",
        help="send canvases to a `dcomplete engine` server instead of loading --model here "
        "(default: $DCOMPLETE_ENGINE_URL)",
    )
    group.add_argument(
        "--api-key", default=os.environ.get("DCOMPLETE_API_KEY") or None,
        help="bearer token for --engine-url (default: $DCOMPLETE_API_KEY)",
    )
    group.add_argument(
        "--sampler",
        choices=("fast", "reference"),
        default="fast",
        help="fast: confidence threshold + fixed-text cache; reference: the family's own schedule",
    )
    group.add_argument("--steps", type=int, default=None, help="denoising steps (reference sampler)")
    group.add_argument("--alg", choices=("maskgit_plus", "topk_margin", "entropy"), default=None)
    group.add_argument("--threshold", type=float, default=None, help="confidence threshold (fast sampler)")
    group.add_argument(
        "--block", type=int, default=None,
        help="fast sampler: commit left to right within the first N masks of each span (cheaper long spans)",
    )
    group.add_argument("--temperature", type=float, default=None)
    group.add_argument("--top-p", type=float, default=None, dest="top_p")
    group.add_argument("--seed", type=int, default=None)
    group.add_argument(
        "--eos-penalty", type=float, default=None, dest="eos_penalty",
        help="subtract from end-of-text logits (for models that leave gaps empty)",
    )
    group.add_argument("--retries", type=int, default=2, help="re-mask rounds when a result does not parse")
    group.add_argument(
        "--allow-errors", action="store_true", help="keep a result even when the filled file does not parse"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="report each stage on stderr")


def seconds_alive() -> float:
    """Seconds since this process started (Linux: from /proc; elsewhere since this module was imported)."""
    try:
        with open("/proc/self/stat") as f:
            started_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return uptime - started_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - _IMPORTED


def say(args: argparse.Namespace, message: str) -> None:
    if args.verbose:
        print(f"dcomplete: {message}", file=sys.stderr, flush=True)


def add_language_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--language", metavar="NAME", default=None,
        help="the files' language (python, typescript, go, ...; an editor's languageId works too) instead of "
        "the one their extension names; a file with an unknown extension is plain text (lines, no parse check)",
    )


def file_language(path: str, args: argparse.Namespace) -> LanguageSpec:
    """`--language`, else the language of the file's extension, else plain text; a bad name is BadInput."""
    try:
        return language_for_file(path, getattr(args, "language", None))
    except UnsupportedLanguage as exc:
        raise BadInput(f"--language: {exc}") from None


def add_context_options(parser: argparse.ArgumentParser) -> None:
    from infill.context.builder import DEFAULT_TOKENS

    group = parser.add_argument_group("repository context")
    group.add_argument(
        "--no-context", dest="context", action="store_false",
        help="leave out code from the rest of the file's project (by default the definitions the file imports and"
        " the file's own functions the window cuts off go above it; -v lists them)",
    )
    group.add_argument(
        "--context-tokens", type=int, default=DEFAULT_TOKENS, metavar="N",
        help=f"tokens that code may take (default {DEFAULT_TOKENS}; at most half the model's context)",
    )


def context_builders(args: argparse.Namespace, tokenizer: Any, max_length: int) -> Builders | None:
    """The builders of `--context-tokens` for an engine (None: --no-context)."""
    if not args.context or args.context_tokens == 0:
        return None
    from infill.context import Builders

    return Builders(tokenizer, max_length, args.context_tokens)


def context_header(args: argparse.Namespace, builders: Builders | None, path: str, text: str, offset: int,
                   spec: LanguageSpec) -> str:
    """The header for a fill of `path` at `offset`, from the project the file is in; -v lists its chunks."""
    if builders is None:
        return ""
    from infill.context import repo_root

    context = builders.build(repo_root(path), path, text, offset, spec)
    say(args, f"{path}: context of {len(context.chunks)} chunks, {context.tokens} tokens")
    for line in context.describe():
        say(args, f"  {line}")
    return context.header


def check_context_options(args: argparse.Namespace) -> None:
    if args.context_tokens < 0:
        raise BadInput(f"--context-tokens {args.context_tokens}: must be at least 0")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--write", action="store_true", help="rewrite the file(s) in place, atomically")
    parser.add_argument("--json", action="store_true", help="print the edits as JSON instead of a patch")


SAMPLER_FLAGS = ("steps", "alg", "threshold", "block", "temperature", "top_p", "seed", "eos_penalty")


def denoise_params(args: argparse.Namespace) -> Any:
    """--sampler is the preset, the other sampler flags that were given change it."""
    from infill.user_settings import denoise_params

    try:
        return denoise_params(args.sampler, **{name: getattr(args, name) for name in SAMPLER_FLAGS})
    except ValueError as exc:
        raise BadInput(f"sampler options: {exc}") from None


def fill_options(args: argparse.Namespace, **extra: Any) -> FillOptions:
    if args.retries < 0:
        raise BadInput(f"--retries {args.retries}: must be >= 0")
    return FillOptions(retries=args.retries, keep_invalid=args.allow_errors, **extra)


def load_engine(args: argparse.Namespace) -> Any:
    """The engine `--model` names, loaded here, or the server `--engine-url` names (`remote.engines`)."""
    from engine import ModelLoadError
    from remote.client import EngineUnavailable, RemoteEngine
    from remote.engines import open_engine

    url = getattr(args, "engine_url", None)  # `dcomplete engine` loads with these options too, without it
    try:
        engine = open_engine(args.model, args.device, url, getattr(args, "api_key", None), serving=True)
    except EngineUnavailable as exc:
        raise BadInput(f"--engine-url: {exc}") from None
    except ModelLoadError as exc:
        raise BadInput(str(exc)) from None
    except (OSError, RuntimeError) as exc:
        if not url and args.device is not None and "device" in str(exc).lower():
            raise BadInput(f"--device {args.device}: {exc}") from None
        raise
    if isinstance(engine, RemoteEngine):  # the --engine-url one
        say(args, f"using engine {engine.name} ({engine.family}) at {engine.url}")
    else:
        say(args, f"loaded model {engine.name} ({engine.family}, {engine.device}, context {engine.max_length})")
    return engine


def result_json(path: str, text: str, result: FillResult) -> dict[str, Any]:
    """The JSON shape of one file's result: 0-based LSP positions in UTF-16 characters."""
    lines = LineIndex(text)

    def position(offset: int) -> dict[str, int]:
        line, character = lines.to_lsp(offset, "utf-16")
        return {"line": line, "character": character}

    return {
        "file": path,
        "edits": [
            {
                "range": {"start": position(e.start), "end": position(e.end)},
                "new_text": e.new_text,
                "token_ids": list(e.token_ids),
            }
            for e in result.edits
        ],
        "canvas_ids": list(result.canvas_ids),
        "stats": {
            "new_tokens": result.stats.new_tokens,
            "forward_passes": result.stats.forward_passes,
            "seconds": round(result.stats.seconds, 4),
        },
        "notes": list(result.notes),
        "unbinding": result.unbinding,
    }


def dump_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
