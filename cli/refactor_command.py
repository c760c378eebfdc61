"""`dcomplete refactor PATH...`: regenerate many spots in many files, one canvas per file."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

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
)
from infill.batch_fill import Backend, FailedFile, LocalFill, Outcome, batches_of
from infill.files import BadInput, atomic_write, read_source, sweep_stale_temps, unified_diff
from infill.fill import FillJob, FillOptions, FillResult
from infill.holes import find_holes
from infill.languages import LanguageSpec, UnsupportedLanguage, language_for_path
from infill.progress import Progress
from infill.query import BadQuery, function_body_query, spots_from_query
from infill.spots import Spot, apply_edits
from infill.windows import plan_regenerate

if TYPE_CHECKING:
    from engine.params import DenoiseParams

HELP = """Regenerate spots in many files. Spots come from --lines, --query / --function-regex and
--holes (a line that is only a `<|hole|>` or `<|hole:N|>` comment: `# <|hole|>`, `// <|hole|>`,
`-- <|hole|>`, by the file's language); all spots of one file share one canvas,
and files go to the model --batch at a time. Prints one unified diff (apply with `patch -p1` from the
current directory) or rewrites the files with --write; --check CMD then runs CMD in a shell and
restores every touched file when it fails. A directory in PATH stands for its source files (every
extension of the language table, or, with --language, that language's). The language comes from each
file's extension unless --language names it.
With --ray the model runs in a pool of actors on a Ray cluster; planning, output and writing stay here.

--instruction TEXT goes into each file's context as a comment block at the top
(`# Instruction: TEXT`): instruction-tuned checkpoints read it, base checkpoints mostly ignore it.
Code from the rest of each file's project (the definitions it imports, its own functions the window cuts
off) goes above the file's text, built once per file at its first spot (-v lists it; --no-context
leaves it out).

examples:
  dcomplete refactor src --holes --write
  dcomplete refactor app.py --lines app.py:10-20,40-44
  dcomplete refactor tests --function-regex '^test_' --instruction 'use pytest.raises' --write --check 'pytest -q'
  dcomplete refactor lib.py --query '(function_definition body: (block) @body)' --json
  dcomplete refactor src --holes --write --ray 10.0.0.5:6379 --ray-actors 8
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "refactor",
        help="regenerate many spots in many files",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", metavar="PATH")
    parser.add_argument("--lines", action="append", default=[], metavar="FILE:A-B[,C-D]")
    chooser = parser.add_mutually_exclusive_group()
    chooser.add_argument("--query", metavar="TS_QUERY", help="tree-sitter query capturing @spot or @body")
    chooser.add_argument("--function-regex", metavar="RE", help="bodies of functions whose name matches RE")
    parser.add_argument("--holes", action="store_true", help="fill every hole marker line")
    parser.add_argument(
        "--instruction", metavar="TEXT", help="comment block at the top of each file's context"
    )
    parser.add_argument(
        "--check", metavar="CMD", help="after --write, run CMD; restore the files if it fails"
    )
    parser.add_argument("--batch", type=int, default=8, help="files per engine call (default 8)")
    add_output_options(parser)
    add_language_option(parser)
    add_context_options(parser)
    add_engine_options(parser)
    _add_ray_options(parser)
    parser.set_defaults(run=run)


def _add_ray_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Ray cluster (pip install 'dcomplete[ray]')")
    group.add_argument(
        "--ray", nargs="?", const="", default=None, metavar="ADDRESS",
        help="denoise on a pool of Ray actors; ADDRESS (host:port, ray://host:port, auto) defaults to"
        " $DCOMPLETE_RAY_ADDRESS, then Ray's own ($RAY_ADDRESS, a cluster started on this machine, else a"
        " local one for this run). Writing stays here.",
    )
    group.add_argument(
        "--ray-actors", type=int, default=None, metavar="N",
        help="actors, each loading the model once (default: one per GPU when the cluster has GPUs, else 1)",
    )
    group.add_argument(
        "--ray-gpus-per-actor", type=float, default=None, metavar="G",
        help="GPUs each actor reserves (default: 1 when the cluster has GPUs, else 0)",
    )


@dataclass
class FilePlan:
    path: str
    text: str
    spec: LanguageSpec
    ranges: list[tuple[int, int]]


def _expand(paths: list[str], language: str | None = None) -> list[str]:
    """Files as given, and under each directory the files of a known language (of `language` only, when
    given)."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    try:
                        spec = language_for_path(name)
                    except UnsupportedLanguage:
                        continue
                    if language and language not in spec.names:
                        continue
                    found.append(os.path.join(root, name))
        else:
            found.append(path)
    return list(dict.fromkeys(os.path.normpath(p) for p in found))


def _parse_lines(option: str) -> tuple[str, list[tuple[int, int]]]:
    path, sep, ranges = option.rpartition(":")
    if not sep or not path:
        raise BadInput(f"--lines {option}: expected FILE:A-B[,C-D]")
    result = []
    for part in ranges.split(","):
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise BadInput(f"--lines {option}: {part!r} is not a line range A-B")
        start, end = int(low), int(high) if dash else int(low)
        if end < start:
            raise BadInput(f"--lines {option}: END {end} is before START {start}")
        result.append((start, end))
    return os.path.normpath(path), result


def plan_files(args: argparse.Namespace) -> list[FilePlan]:
    if not (args.lines or args.query or args.function_regex or args.holes):
        raise BadInput(
            "refactor needs --lines, --query, --function-regex or --holes to know what to regenerate"
        )
    line_ranges: dict[str, list[tuple[int, int]]] = {}
    for option in args.lines:
        path, ranges = _parse_lines(option)
        line_ranges.setdefault(path, []).extend(ranges)
    given = _expand(args.paths, args.language)
    paths = given + [p for p in line_ranges if p not in given]
    if not paths:
        raise BadInput("refactor: no files given")
    plans = []
    for path in paths:
        text = read_source(path)
        plans.append(FilePlan(path, text, file_language(path, args), line_ranges.get(path, [])))
    return plans


def spots_for(plan: FilePlan, args: argparse.Namespace, tokenizer: object = None) -> list[Spot]:
    spots: list[Spot] = []
    for start, end in plan.ranges:
        try:
            spots.append(plan_regenerate(plan.text, start, end, plan.spec, tokenizer=tokenizer))
        except ValueError as exc:
            raise BadInput(f"--lines {plan.path}:{start}-{end}: {exc}") from None
    query = args.query or (
        function_body_query(args.function_regex, plan.spec) if args.function_regex else None
    )
    if query:
        spots.extend(spots_from_query(plan.text, query, plan.spec, tokenizer=tokenizer))
    if args.holes:
        spots.extend(find_holes(plan.text, plan.spec))
    kept: list[Spot] = []
    for spot in sorted(spots, key=lambda s: (s.start, -s.end)):
        if kept and spot.start <= kept[-1].end:
            continue
        kept.append(spot)
    return kept


def run(args: argparse.Namespace) -> int:
    if args.batch < 1:
        raise BadInput(f"--batch {args.batch}: must be at least 1")
    if args.check and not args.write:
        raise BadInput("--check runs after --write; add --write")
    check_context_options(args)
    _path_after_ray(args)
    plans = plan_files(args)
    if args.write:
        for stale in sweep_stale_temps([plan.path for plan in plans]):
            print(f"dcomplete: removed {stale}, left by an interrupted write", file=sys.stderr)
    try:
        found = sum(len(spots_for(plan, args)) for plan in plans)
    except BadQuery as exc:
        raise BadInput(str(exc)) from None
    if not found:
        print(f"dcomplete: nothing to regenerate in {len(plans)} files", file=sys.stderr)
        return 0
    options = fill_options(args, instruction=args.instruction)
    params = denoise_params(args)

    backend = _backend(args, params, options)
    try:
        work = [(plan, spots_for(plan, args, backend.tokenizer)) for plan in plans]
        work = [(plan, spots) for plan, spots in work if spots]
        builders = context_builders(args, backend.tokenizer, backend.max_length)
        jobs = [FillJob(plan.text, tuple(spots), plan.spec, plan.path,
                        context_header(args, builders, plan.path, plan.text, spots[0].start, plan.spec))
                for plan, spots in work]
        progress = Progress(len(work), enabled=sys.stderr.isatty())
        outcomes = backend.fill(batches_of(jobs, args.batch), progress)
        progress.close()
    finally:
        backend.close()
    outputs = []
    failed = 0
    for (plan, _), outcome in zip(work, outcomes, strict=True):
        result = _result_of(plan, outcome)
        failed += isinstance(outcome, FailedFile)
        outputs.append((plan, result, apply_edits(plan.text, result.edits)))
    changed = [(plan, new) for plan, _, new in outputs if new != plan.text]
    if args.json:
        print(
            dump_json({"files": [result_json(plan.path, plan.text, result) for plan, result, _ in outputs]})
        )
    elif not args.write:
        sys.stdout.write("".join(unified_diff(plan.path, plan.text, new) for plan, new in changed))
    if failed:
        print(f"dcomplete: {failed} of {len(outputs)} files failed and are left untouched", file=sys.stderr)
    if not args.write:
        return 1 if failed else 0
    written: list[FilePlan] = []
    try:
        for plan, new in changed:
            atomic_write(plan.path, new)
            written.append(plan)
    except BaseException:
        _restore(written)
        raise
    print(f"dcomplete: rewrote {len(written)} of {len(outputs)} files", file=sys.stderr)
    status = _run_check(args.check, written) if args.check else 0
    return status or (1 if failed else 0)


def _path_after_ray(args: argparse.Namespace) -> None:
    """`refactor --ray src --holes`: argparse gives `src` to --ray; a value that names a file or folder and
    does not look like an address (host:port, scheme://..., auto, local) is a PATH."""
    value = args.ray
    if value and os.path.exists(value) and not re.fullmatch(r"auto|local|\w+://.*|[\w.\-]+:\d+", value):
        args.paths.append(value)
        args.ray = ""


def _backend(args: argparse.Namespace, params: DenoiseParams | None, options: FillOptions) -> Backend:
    """One engine here, or (`--ray`) a pool of actors on a Ray cluster; the module (and ray) load only
    when asked for."""
    if args.ray is None:
        return LocalFill(load_engine(args), params, options, lambda message: say(args, message))
    from remote.ray_refactor import RayFill, ray_options

    return RayFill.start(ray_options(args), params, options, lambda message: say(args, message))


def _result_of(plan: FilePlan, outcome: Outcome) -> FillResult:
    """The file's result, its notes printed; a failed file becomes a result without edits."""
    if isinstance(outcome, FailedFile):
        from engine import Stats

        tries = f"failed {outcome.attempts} times" if outcome.attempts else "not filled"
        note = f"left untouched: {tries} ({outcome.error})"
        outcome = FillResult([], [], Stats(), notes=[note], attempts=0)
    for note in outcome.notes:
        print(f"dcomplete: {plan.path}: {note}", file=sys.stderr)
    return outcome


def _restore(plans: list[FilePlan]) -> None:
    for plan in plans:
        atomic_write(plan.path, plan.text)


def _run_check(command: str, written: list[FilePlan]) -> int:
    status = subprocess.run(command, shell=True, stdout=sys.stderr, check=False).returncode
    if status == 0:
        return 0
    _restore(written)
    print(
        f"dcomplete: check {command!r} failed (exit {status}); restored {len(written)} files", file=sys.stderr
    )
    return 1
