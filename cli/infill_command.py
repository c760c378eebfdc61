"""`dcomplete infill FILE:LINE[-END]`: complete at one line, or regenerate whole lines of one file."""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time

from cli.common import (
    add_context_options,
    add_engine_options,
    add_language_option,
    add_output_options,
    check_context_options,
    context_builders,
    context_header,
    denoise_params,
    dump_json,
    file_language,
    fill_options,
    load_engine,
    result_json,
    say,
    seconds_alive,
)
from infill.files import BadInput, atomic_write, read_source, sweep_stale_temps, unified_diff
from infill.fill import fill
from infill.languages import LanguageSpec
from infill.positions import LineIndex
from infill.spots import Spot, apply_edits
from infill.windows import plan_completion, plan_regenerate

_TARGET = re.compile(r"^(?P<path>.+):(?P<start>\d+)(?:-(?P<end>\d+))?$")

HELP = """FILE:LINE completes at the end of line LINE as an editor would at a cursor there: the syntax
decides between nothing (the line is already complete), the rest of the line, or a block (after
`def f(...):` or an open bracket). FILE:START-END regenerates lines START..END (1-based, inclusive).
The change is printed as a unified diff (apply it with `patch -p1` from the current directory), or
written to FILE with --write. Code from the rest of the project FILE is in (the nearest folder with .git,
pyproject.toml, setup.py or setup.cfg) goes above the file's text: the definitions it imports and its
own functions the window cuts off (-v lists them; --no-context leaves them out).

examples:
  dcomplete infill app.py:40-55
  dcomplete infill app.py:40-55 | patch -p1
  dcomplete infill app.py:12 --write            complete after line 12 (e.g. a body after `def`)
  dcomplete infill app.py:12-12 --length 24     regenerate line 12 with exactly 24 tokens
  dcomplete infill app.py:40-55 --json --sampler reference --steps 32
  dcomplete infill app.py:12 -v --context-tokens 128
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "infill",
        help="complete at a line, or regenerate a line range, of one file",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", metavar="FILE:LINE[-END]")
    parser.add_argument("--length", type=int, default=None, help="force the mask count (no growth)")
    add_output_options(parser)
    add_language_option(parser)
    add_context_options(parser)
    add_engine_options(parser)
    parser.set_defaults(run=run)


def parse_target(target: str) -> tuple[str, int, int | None]:
    """(path, start, end); end is None for FILE:LINE (complete at that line)."""
    match = _TARGET.match(target)
    if match is None:
        raise BadInput(f"{target}: expected FILE:LINE or FILE:START-END")
    start = int(match["start"])
    end = int(match["end"]) if match["end"] else None
    if end is None:
        if start < 1:
            raise BadInput(f"{target}: lines count from 1")
        return match["path"], start, None
    if end < start:
        raise BadInput(f"{target}: END {end} is before START {start}")
    if start < 1:
        raise BadInput(f"{target}: lines count from 1")
    return match["path"], start, end


def complete_at(text: str, line: int, spec: LanguageSpec, target: str) -> Spot | None:
    """The completion spot at the end of 1-based line `line` (None: nothing to complete there)."""
    lines = LineIndex(text)
    if line > lines.line_count:
        raise BadInput(f"{target}: line {line} is past the end of the file ({lines.line_count} lines)")
    return plan_completion(text, lines.line_end(line - 1), spec)


def run(args: argparse.Namespace) -> int:
    path, start, end = parse_target(args.target)
    text = read_source(path)
    spec = file_language(path, args)
    if args.length is not None and args.length < 1:
        raise BadInput(f"--length {args.length}: must be at least 1")
    check_context_options(args)
    if end is None:
        planned = complete_at(text, start, spec, args.target)
        if planned is None:
            print(f"dcomplete: {args.target}: nothing to complete after this line (it is complete);"
                  f" give {path}:{start}-{start} to regenerate it", file=sys.stderr)
            return 0
    else:
        try:
            plan_regenerate(text, start, end, spec)
        except ValueError as exc:
            raise BadInput(f"{args.target}: {exc}") from None
    options = fill_options(args, max_grow=0 if args.length is not None else None)
    params = denoise_params(args)

    loading = time.perf_counter()
    engine = load_engine(args)
    loaded = time.perf_counter()
    if end is None:
        assert planned is not None  # returned above when None
        spot = planned
    else:
        spot = plan_regenerate(text, start, end, spec, tokenizer=engine.tokenizer)
    if spot.warning:
        print(f"dcomplete: warning: {args.target}: {spot.warning}", file=sys.stderr)
    if args.length is not None:
        spot = Spot(spot.start, spot.end, args.length, spot.kind, spot.warning)
    builders = context_builders(args, engine.tokenizer, engine.max_length)
    options = dataclasses.replace(options, context=context_header(args, builders, path, text, spot.start, spec))
    say(args, f"denoising 1 spot of {spot.n_masks} masks")
    result = fill(engine, text, [spot], params, spec, doc_id=path, options=options)
    stats = result.stats
    say(args, f"times: start-up and imports {seconds_alive() - (time.perf_counter() - loading):.2f} s, "
              f"model load {loaded - loading:.2f} s, "
              f"prefill {stats.prompt_seconds:.2f} s, decode {stats.seconds - stats.prompt_seconds:.2f} s "
              f"({stats.new_tokens} tokens in {stats.forward_passes} forwards)")
    for note in result.notes:
        print(f"dcomplete: {path}: {note}", file=sys.stderr)
    new_text = apply_edits(text, result.edits)
    if args.write and new_text != text:
        sweep_stale_temps([path])
        atomic_write(path, new_text)
    if args.json:
        print(dump_json(result_json(path, text, result)))
    elif not args.write:
        sys.stdout.write(unified_diff(path, text, new_text))
    return 0
