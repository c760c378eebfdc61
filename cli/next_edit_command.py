"""`dcomplete next-edit FILE`: the edit the last change to FILE implies elsewhere in it, as a diff."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from cli.common import (
    add_engine_options,
    add_language_option,
    denoise_params,
    dump_json,
    file_language,
    load_engine,
)
from infill.files import BadInput, atomic_write, read_source, sweep_stale_temps, unified_diff
from infill.next_edit.edits import edit_between
from infill.next_edit.patches import PatchError, before_patch
from infill.next_edit.rewrite import applied
from infill.next_edit.suggest import AGGRESSIVENESS, NextEditSettings, OpenDocument, propose
from infill.positions import LineIndex

HELP = """FILE holds a change the user just made; the change is what FILE was before it (--before OLD),
or a unified diff of it (--patch DIFF, `-` for stdin, as `git diff` prints it), or by default what `git
diff` shows for FILE against the index. The model masks the places the change implies (where the text it
replaced still stands, lines shaped like it, the line below it) and rewrites them in one pass; the best
next edit it is sure of is printed as a unified diff, or written to FILE with --write (atomically).
Nothing is printed when there is none (exit 0; -v says why for each place).

examples:
  dcomplete next-edit views.py                          after editing views.py in a git checkout
  dcomplete next-edit views.py --before views.py.orig
  git diff views.py | dcomplete next-edit views.py --patch -
  dcomplete next-edit views.py --write --aggressiveness high
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("next-edit", help="the edit a change implies elsewhere in the file",
                                   description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", metavar="FILE")
    given = parser.add_mutually_exclusive_group()
    given.add_argument("--before", metavar="OLD", help="FILE as it was before the change")
    given.add_argument("--patch", metavar="DIFF", help="the change as a unified diff (- reads stdin)")
    parser.add_argument("--aggressiveness", choices=tuple(AGGRESSIVENESS), default="medium",
                        help="how sure the model must be (default: medium)")
    parser.add_argument("--write", action="store_true", help="apply the next edit to FILE")
    parser.add_argument("--json", action="store_true", help="print every candidate place and what became of it")
    add_language_option(parser)
    add_engine_options(parser)
    parser.set_defaults(run=run)


def _before(args: argparse.Namespace, current: str) -> str:
    try:
        if args.before is not None:
            return read_source(args.before)
        if args.patch is not None:
            patch = sys.stdin.read() if args.patch == "-" else read_source(args.patch)
            return before_patch(current, patch)
        return before_patch(current, _git_diff(args.file))
    except PatchError as error:
        raise BadInput(f"{args.patch or args.file}: {error}") from None


def _git_diff(path: str) -> str:
    folder = Path(path).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(folder), "diff", "--no-color", "--no-ext-diff", "--", Path(path).name],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BadInput(f"{path}: no --before or --patch, and git could not be asked ({error})") from None
    if out.returncode != 0:
        why = next((line for line in out.stderr.splitlines() if line.strip()), f"exit status {out.returncode}")
        raise BadInput(f"{path}: no --before or --patch, and `git diff` failed ({why.strip()[:160]})")
    if not out.stdout.strip():
        raise BadInput(f"{path}: no --before or --patch, and `git diff` shows no change to it")
    return out.stdout


def run(args: argparse.Namespace) -> int:
    path = args.file
    current = read_source(path)
    before = _before(args, current)
    uri = Path(path).resolve().as_uri()
    edit = edit_between(uri, before, current)
    if edit is None:
        raise BadInput(f"{path}: the change is empty (the file equals its version before)")
    spec = file_language(path, args)
    engine = load_engine(args)
    judged = propose(engine, OpenDocument(uri, current, spec), [edit], denoise_params(args),
                     NextEditSettings(args.aggressiveness))
    if args.verbose:
        index = LineIndex(current)
        for j in judged:
            print(f"dcomplete: {path}:{index.line_of(j.region.start) + 1}: {j.region.kind}, {j.why}", file=sys.stderr)
    shown = next((j.shown for j in judged if j.shown is not None), None)
    new_text = applied(current, [shown] if shown is not None else [])
    if args.json:
        print(dump_json({"file": path, "edit": {"line": edit.line + 1, "old": edit.old_lines, "new": edit.new_lines},
                         "places": [{"line": LineIndex(current).line_of(j.region.start) + 1, "kind": j.region.kind,
                                     "old": current[j.region.start : j.region.end], "proposal": j.proposal,
                                     "margin": j.margin, "shown": j.shown.new_text if j.shown else None,
                                     "why": j.why} for j in judged]}))
    if shown is None:
        return 0
    if args.write:
        sweep_stale_temps([path])
        atomic_write(path, new_text)
    elif not args.json:
        sys.stdout.write(unified_diff(path, current, new_text))
    return 0
