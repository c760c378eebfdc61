"""Quality benchmark: HumanEval-infilling pass@1, SantaCoder-FIM exact match per language, and parse rate.

    python -m bench.quality [--model M|none] [--limit N] [--sampler fast,ar,reference] [--length own|oracle|both]
                            [--plot PNG] [--seed S] [--canonical] [--benchmarks single,multi,santacoder]
                            [--languages py,js,java]

Rows: the trivial baselines (bench.baselines) and dcomplete through the infill API, with its own length
choice (`plan_completion` with the cursor on an empty line where the gap was; see `model_completer`)
and/or the oracle length (mask count = token count of the canonical middle).

Columns: pass@1 on the single- and multi-line splits (n = 1, greedy, executed in the sandbox of
bench.humaneval_exec), SantaCoder-FIM exact match, and the parse rate of the filled HumanEval files
(single + multi). Subsets are seeded samples (bench.datasets.fixed_subset); every n is printed.
SantaCoder-FIM runs the languages of --languages (--limit tasks of each) and adds a table per language:
exact match and the parse rate of the filled files with that language's grammar beside the canonical
middles' (bench.santacoder).

Stdout ends with one JSON line. Its top-level metrics are dcomplete's default row (fast sampler, own
length) as fractions in [0, 1], or null when that row was not run. Model rows also count `no_spot`
(plan_completion declined) and `no_edit` (infill returned no edit; `fill_notes` tallies its reasons, e.g.
"empty result"): both leave the document unfilled, which still counts in the parse rate, so read the
parse rate next to them; `retried` (fills whose first result broke the parse), `rescued` and `unbinding`
(fills with a result that parsed but no longer defined a name the code after it reads, infill.scope: none
here, where every spot is an insertion that replaces nothing; bench.holes --regenerate counts them).
Speed figures come from the engine's Stats: tokens_per_second counts generated tokens other than EOS/pad
(Stats.new_tokens), so a model that ends every gap at once scores 0 there; seconds_per_fill is the
latency side. --plot sweeps the threshold over the whole single-line subset six times: use --limit on a CPU.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.baselines import BASELINES
from bench.datasets import (
    SANTACODER_LANGUAGES,
    DataError,
    InfillTask,
    fixed_subset,
    load_humaneval,
    load_santacoder,
)
from bench.humaneval_exec import check_program, isolation_wrapper, run_programs
from bench.knob_plot import PLOT_THRESHOLDS, write_knob_plot
from bench.santacoder import by_language, format_language_table, santacoder_exact_match
from bench.saved_fills import SavedFills
from bench.tally import Cost, Filled, RowTally

DEFAULT_ROW = "dcomplete/fast/own"
SAMPLERS = ("fast", "reference", "ar")
DEFAULT_MULTI_SUBSET = 1000
PROGRESS_EVERY = 25


Completer = Callable[[InfillTask, RowTally], Filled]


def parses(document: str) -> bool:
    try:
        ast.parse(document)
    except (SyntaxError, ValueError):
        return False
    return True


def baseline_completer(name: str) -> Completer:
    make = BASELINES[name]

    def complete(task: InfillTask, tally: RowTally) -> Filled:
        completion = make(task)
        return Filled(task.prefix + completion + task.suffix, completion)
    return complete


def canonical_completer(task: InfillTask, tally: RowTally) -> Filled:
    """The dataset's own middle: the harness check (must score 100 in every column but SantaCoder's parse
    rates, whose files are partly fragments)."""
    if task.test:
        return Filled(task.prefix + task.middle + task.suffix, task.middle)
    return Filled(task.prefix + task.middle + "\n" + task.suffix, task.middle)


def model_completer(engine: Any, params: Any, length: str, heal: bool = True) -> Completer:
    """dcomplete through the infill API only: a spot, `fill`, and the first edit applied to the document.

    Own length: the document is `prefix + "\n" + suffix` with the cursor at `len(prefix)`, i.e. on an empty
    line where the gap was, which is where an editor user stands when writing that code. At the literal
    gap position (start of the line after the gap) `plan_completion` declines 78% of single-line tasks,
    because code follows the cursor on its line. Oracle length: the published convention (Open-dLLM /
    DreamOn): `prefix + suffix`, one block spot at the gap with as many masks as the canonical middle has
    tokens in the model's tokenizer, and no growth (`max_grow=0`), so the canvas keeps the oracle's size.
    Everything else is dcomplete's default pipeline (post-processing, re-mask retries, dropping an edit
    that adds parse errors).
    """
    from infill import FillOptions, Spot, fill, plan_completion
    from infill.canvas import ContextOverflow
    from infill.settle import note_reason

    options = FillOptions(heal=heal) if length == "own" else FillOptions(max_grow=0, heal=heal)

    def complete(task: InfillTask, tally: RowTally) -> Filled:
        if length == "own":
            text, offset = task.prefix + "\n" + task.suffix, task.cursor
            spot = plan_completion(text, offset, language=task.language)
        else:
            text, offset = task.document, task.cursor
            oracle = len(engine.tokenizer.encode(task.middle, add_special_tokens=False))
            spot = Spot(start=offset, end=offset, n_masks=max(1, oracle), kind="block")
        if spot is None:
            tally.no_spot += 1
            return Filled(text, "")
        try:
            result = fill(engine, text, [spot], params, language=task.language, options=options)
        except ContextOverflow:  # an oracle middle longer than the model's context: counted as a miss
            tally.notes.update(["gap longer than the model's context"])
            tally.no_edit += 1
            return Filled(text, "")
        cost = tally.now
        cost.fills += 1
        cost.new_tokens += result.stats.new_tokens
        cost.forward_passes += result.stats.forward_passes
        cost.seconds += result.stats.seconds
        tally.notes.update(note_reason(note) for note in result.notes)
        tally.retried += result.attempts > 1
        tally.rescued += result.rescued
        tally.unbinding += result.unbinding
        edit = result.edits[0] if result.edits else None
        if edit is None:
            tally.no_edit += 1
            return Filled(text, "")
        cost.written += len(engine.tokenizer.encode(edit.new_text, add_special_tokens=False))
        return Filled(text[: edit.start] + edit.new_text + text[edit.end:], edit.new_text)
    return complete


@dataclass(frozen=True)
class Suite:
    single: list[InfillTask]
    multi: list[InfillTask]
    santacoder: list[InfillTask]

    @property
    def sizes(self) -> dict[str, int]:
        return {"single": len(self.single), "multi": len(self.multi), "santacoder": len(self.santacoder)}


BENCHMARKS = ("single", "multi", "santacoder")


def load_suite(limit: int | None, seed: int, benchmarks: Sequence[str] = BENCHMARKS,
               languages: Sequence[str] = ("py",)) -> Suite:
    """The seeded subsets; a benchmark left out of `benchmarks` is empty (its columns print "-").
    SantaCoder-FIM takes `limit` tasks of each of `languages`, one language after another."""
    multi_limit = DEFAULT_MULTI_SUBSET if limit is None else limit
    santacoder = [task for code in languages for task in fixed_subset(load_santacoder(code), limit, seed)]
    return Suite(
        single=fixed_subset(load_humaneval("single"), limit, seed) if "single" in benchmarks else [],
        multi=fixed_subset(load_humaneval("multi"), multi_limit, seed) if "multi" in benchmarks else [],
        santacoder=santacoder if "santacoder" in benchmarks else [])


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _passing(tasks: Sequence[InfillTask], filled: Sequence[Filled], workers: int | None) -> list[str]:
    """The ids of the tasks whose filled program passes its tests (the row's JSON keeps them, so two rows
    can be compared task by task)."""
    programs = [check_program(f.document, t.test, t.entry_point) for t, f in zip(tasks, filled)]
    return [t.task_id for t, r in zip(tasks, run_programs(programs, workers=workers)) if r.passed]


def evaluate_row(name: str, complete: Completer, suite: Suite, workers: int | None,
                 benchmarks: Sequence[str] = BENCHMARKS, saved: SavedFills | None = None,
                 saved_only: bool = False) -> dict:
    """Fill every task of the chosen benchmarks with `complete` (or take its fill from `saved`) and score
    them; `saved_only` scores only the tasks `saved` holds for this row."""
    tally = RowTally()
    saved = saved or SavedFills(None)
    chosen = {b: [t for t in getattr(suite, b) if not saved_only or saved.get(name, b, t.task_id)]
              for b in BENCHMARKS}
    suite = Suite(chosen["single"], chosen["multi"], chosen["santacoder"])
    for bench_name in benchmarks:
        tasks = getattr(suite, bench_name)
        started = time.monotonic()
        tally.current = bench_name
        filled = tally.filled[bench_name] = []
        for index, task in enumerate(tasks, 1):
            done = saved.get(name, bench_name, task.task_id)
            filled.append(done or saved.put(name, bench_name, task.task_id, complete(task, tally)))
            if index % PROGRESS_EVERY == 0:
                _progress(f"[{name}] {bench_name}: {index}/{len(tasks)} in {time.monotonic() - started:.1f}s")
        _progress(f"[{name}] {bench_name}: {len(tasks)} filled in {time.monotonic() - started:.1f}s")
    row: dict = {"n": {b: len(getattr(suite, b)) for b in benchmarks}}
    for kind in ("single", "multi"):
        tasks = getattr(suite, kind)
        if kind in benchmarks:
            passing = _passing(tasks, tally.filled[kind], workers) if tasks else []
            row[f"pass_at_1_{kind}"] = len(passing) / len(tasks) if tasks else None
            row[f"passed_{kind}"] = passing
    if "santacoder" in benchmarks:
        hits = [santacoder_exact_match(f.completion, t.middle)
                for t, f in zip(suite.santacoder, tally.filled["santacoder"])]
        row["exact_match_santacoder"] = sum(hits) / len(hits) if hits else None
        row["santacoder_by_language"] = by_language(suite.santacoder, tally.filled["santacoder"])
    documents = [f.document for b in ("single", "multi") for f in tally.filled.get(b, [])]
    row["parse_rate"] = sum(map(parses, documents)) / len(documents) if documents else None
    if tally.cost:
        row["no_spot"], row["no_edit"], row["fill_notes"] = tally.no_spot, tally.no_edit, dict(tally.notes)
        row["retried"], row["rescued"], row["unbinding"] = tally.retried, tally.rescued, tally.unbinding
        row.update(sum(tally.cost.values(), Cost()).report())
        row["cost"] = {name: cost.report() for name, cost in tally.cost.items()}
    return row


def sampler_params(sampler: str, seed: int, threshold: float | None = None, eos_penalty: float = 0.0) -> Any:
    """fast: the default sampler; reference: the family's own sampler (one token per span per step for a
    left-to-right family); ar: greedy autoregressive decoding of the anchored family's base from the
    prefix alone (adapter off), the baseline every figure is compared with."""
    from engine import DenoiseParams

    if sampler == "ar":
        return DenoiseParams(seed=seed, adapter=False)
    if sampler == "reference":
        return DenoiseParams.reference().with_(seed=seed, eos_penalty=eos_penalty)
    return DenoiseParams.fast(threshold if threshold is not None else 0.9).with_(seed=seed, eos_penalty=eos_penalty)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:5.1f}"


def format_table(rows: dict[str, dict], sizes: dict[str, int]) -> str:
    columns = f"{'single':>7} {'multi':>7} {'sc-EM':>7} {'parse':>7}"
    header = f"{'method / length':<26} {columns}  n (single/multi/sc)"
    lines = [header, "-" * len(header)]
    for name, row in rows.items():
        n = row["n"]
        counts = "/".join(str(n.get(b, "-")) for b in ("single", "multi", "santacoder"))
        cells = " ".join(f"{_percent(row.get(key)):>7}" for key in
                         ("pass_at_1_single", "pass_at_1_multi", "exact_match_santacoder", "parse_rate"))
        lines.append(f"{name:<26} {cells}  {counts}")
    lines.append("values in %; pass@1 with n=1 greedy; sc-EM = SantaCoder-FIM exact match (first line, all languages); "
                 f"parse = ast.parse of the filled HumanEval files; subset sizes {sizes}")
    return "\n".join(lines)


def summary(rows: dict[str, dict], args: argparse.Namespace, suite: Suite) -> dict:
    default = rows.get(DEFAULT_ROW, {})
    return {
        "pass_at_1_single": default.get("pass_at_1_single"),
        "pass_at_1_multi": default.get("pass_at_1_multi"),
        "exact_match_santacoder": default.get("exact_match_santacoder"),
        "santacoder_by_language": default.get("santacoder_by_language"),
        "languages": args.languages,
        "parse_rate": default.get("parse_rate"),
        "default_row": DEFAULT_ROW,
        "model": args.model,
        "seed": args.seed,
        "eos_penalty": args.eos_penalty,
        "dtype": args.dtype,
        "n": suite.sizes,
        "subset": "seeded sample (random.Random(seed)) in dataset order; multi-line capped at "
                  f"{DEFAULT_MULTI_SUBSET} unless --limit",
        "sandbox": isolation_wrapper()[0],
        "rows": rows,
    }


def sweep_and_plot(engine: Any, suite: Suite, png: str, seed: int, workers: int | None,
                   length: str = "own") -> list[dict]:
    """The quality/speed knob: single-line pass@1 and tokens/s of the fast sampler (at `length`) against
    its confidence threshold."""
    points = []
    for threshold in PLOT_THRESHOLDS:
        name = f"dcomplete/fast@{threshold}/{length}"
        row = evaluate_row(name, model_completer(engine, sampler_params("fast", seed, threshold), length),
                           suite, workers, benchmarks=("single",))
        points.append({"threshold": threshold, "pass_at_1_single": row["pass_at_1_single"],
                       "tokens_per_second": row.get("tokens_per_second"),
                       "tokens_per_forward": row.get("tokens_per_forward"),
                       "seconds_per_fill": row.get("seconds_per_fill")})
    write_knob_plot(points, len(suite.single), png)
    return points


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default",
                        help="Engine.load spec (folder, repo id, 'default'); 'none' runs the baselines only")
    parser.add_argument("--limit", type=int, default=None,
                        help="seeded subset of N tasks per benchmark "
                             f"(default: all; multi-line {DEFAULT_MULTI_SUBSET})")
    parser.add_argument("--sampler", default="fast",
                        help="comma-separated samplers, each a row: fast (default), reference, ar "
                             "(anchored family: the base's greedy decoding from the prefix alone)")
    parser.add_argument("--length", choices=("own", "oracle", "both"), default="both")
    parser.add_argument("--plot", default=None, metavar="PNG",
                        help="also sweep the fast sampler's threshold on the single-line subset "
                             "(at --length oracle, else own) and plot it")
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS),
                        help=f"comma-separated subset of {','.join(BENCHMARKS)} (default: all)")
    parser.add_argument("--languages", default="py",
                        help="SantaCoder-FIM languages, comma-separated, from "
                             f"{','.join(SANTACODER_LANGUAGES)} (default: py); --limit tasks of each")
    parser.add_argument("--seed", type=int, default=0, help="subset sample and sampler seed")
    parser.add_argument("--eos-penalty", type=float, default=0.0,
                        help="subtracted from end-of-text logits (for a model that leaves gaps empty)")
    parser.add_argument("--dtype", default=None, help="float32, bfloat16, int8 (CPU: int8 linear weights)")
    parser.add_argument("--no-heal", action="store_true",
                        help="gaps at the raw cursor for a left-to-right engine (what healed boundaries are worth)")
    parser.add_argument("--canonical", action="store_true",
                        help="add a row of the canonical middles; it must score 100 (checks the harness)")
    parser.add_argument("--workers", type=int, default=None, help="parallel sandboxed test runs")
    parser.add_argument("--save", default=None, metavar="JSONL",
                        help="append each fill to this file and skip the tasks it already holds (resume a "
                             "stopped run by repeating the command; bench.saved_fills)")
    parser.add_argument("--saved-only", action="store_true",
                        help="with --save: score only the tasks already saved (no model runs for the others)")
    args = parser.parse_args(argv)
    unknown = set(args.benchmarks.split(",")) - set(BENCHMARKS)
    if unknown:
        parser.error(f"--benchmarks: unknown {', '.join(sorted(unknown))}; "
                     f"choose from {', '.join(BENCHMARKS)}")
    unknown = set(args.sampler.split(",")) - set(SAMPLERS)
    if unknown:
        parser.error(f"--sampler: unknown {', '.join(sorted(unknown))}; choose from {', '.join(SAMPLERS)}")
    unknown = set(args.languages.split(",")) - set(SANTACODER_LANGUAGES)
    if unknown:
        parser.error(f"--languages: unknown {', '.join(sorted(unknown))}; "
                     f"choose from {', '.join(SANTACODER_LANGUAGES)}")
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be >= 1, got {args.limit}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        suite = load_suite(args.limit, args.seed, args.benchmarks.split(","), args.languages.split(","))
    except DataError as error:
        print(f"bench.quality: {error}", file=sys.stderr)
        return 2
    _progress(f"tasks: {suite.sizes}; sandbox: {isolation_wrapper()[0]}")
    saved = SavedFills(args.save)
    rows = {f"baseline/{name}": evaluate_row(f"baseline/{name}", baseline_completer(name), suite,
                                             args.workers) for name in BASELINES}
    if args.canonical:
        rows["canonical"] = evaluate_row("canonical", canonical_completer, suite, args.workers)
    engine = None
    if args.model != "none":
        from engine import Engine, ModelLoadError

        try:
            engine = Engine.load(args.model, dtype=args.dtype)
        except (ModelLoadError, OSError) as error:
            print(f"bench.quality: cannot load model {args.model!r}: {error}", file=sys.stderr)
            return 2
        for sampler in args.sampler.split(","):
            params = sampler_params(sampler, args.seed, eos_penalty=args.eos_penalty)
            for length in ("own", "oracle") if args.length == "both" else (args.length,):
                name = f"dcomplete/{sampler}/{length}" + ("/no-heal" if args.no_heal else "")
                rows[name] = evaluate_row(name, model_completer(engine, params, length, not args.no_heal),
                                          suite, args.workers, saved=saved, saved_only=args.saved_only)
    print(format_table(rows, suite.sizes))
    if suite.santacoder:
        print(format_language_table(rows))
    report = summary(rows, args, suite)
    if args.plot and engine is None:
        _progress("--plot needs a model; no plot written with --model none")
    elif args.plot:
        length = "oracle" if args.length == "oracle" else "own"
        report["threshold_sweep"] = sweep_and_plot(engine, suite, args.plot, args.seed, args.workers, length)
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
