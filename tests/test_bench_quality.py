"""The quality benchmark's harness: sandboxed execution, the metrics' rules, the baselines and the CLI."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench.baselines import BASELINES, gap_indentation, most_similar_line
from bench.datasets import InfillTask, fixed_subset, load_humaneval, load_santacoder_py
from bench.humaneval_exec import SandboxLimits, check_program, isolation_wrapper, run_program, run_programs
from bench.quality import parses
from bench.santacoder import santacoder_exact_match, santacoder_first_line

REPO = Path(__file__).resolve().parents[1]
ISOLATION = isolation_wrapper()[0]

WRONG_COMPLETIONS = {
    "SingleLineInfilling/HumanEval/2/L0": "    return number // 1.0\n",
    "SingleLineInfilling/HumanEval/12/L0": "    if strings:\n",
    "SingleLineInfilling/HumanEval/23/L0": "    return len(string) - 1\n",
    "SingleLineInfilling/HumanEval/0/L0": "    for idx, elem in enumerate(numbers(\n",
}


@pytest.fixture(scope="module")
def single_line() -> dict[str, InfillTask]:
    return {task.task_id: task for task in load_humaneval("single")}


def _program(task: InfillTask, completion: str) -> str:
    return check_program(task.prefix + completion + task.suffix, task.test, task.entry_point)


def test_dataset_sizes_match_the_manifest(single_line: dict[str, InfillTask]) -> None:
    assert len(single_line) == 1033
    assert len(load_humaneval("multi")) == 5815
    santacoder = load_santacoder_py()
    assert len(santacoder) == 1043
    assert all(task.prefix.endswith("\n") and "\n" not in task.middle for task in santacoder)


def test_fixed_subset_is_seeded_and_keeps_dataset_order() -> None:
    items = list(range(100))
    first, again = fixed_subset(items, 10, seed=3), fixed_subset(items, 10, seed=3)
    assert first == again == sorted(first) and len(set(first)) == 10
    assert fixed_subset(items, 10, seed=4) != first
    assert fixed_subset(items, None, seed=0) == items and fixed_subset(items, 500, seed=0) == items


def test_canonical_solutions_pass_and_wrong_ones_fail(single_line: dict[str, InfillTask]) -> None:
    canonical = fixed_subset(list(single_line.values()), 12, seed=1)
    wrong = [(single_line[task_id], completion) for task_id, completion in WRONG_COMPLETIONS.items()]
    programs = [_program(t, t.middle) for t in canonical] + [_program(t, c) for t, c in wrong]
    results = run_programs(programs, workers=2)
    assert [r.passed for r in results[: len(canonical)]] == [True] * len(canonical)
    assert [r.passed for r in results[len(canonical):]] == [False] * len(wrong)
    assert "AssertionError" in results[len(canonical)].stderr_tail
    assert "SyntaxError" in results[-1].stderr_tail


def test_infinite_loop_and_escaped_children_are_killed_at_the_timeout() -> None:
    marker = f"{time.time_ns() % 10**9}.25"
    program = (f"import subprocess\nsubprocess.Popen(['/bin/sleep', '{marker}'], start_new_session=True)\n"
               "while True:\n    pass\n")
    started = time.monotonic()
    result = run_program(program, SandboxLimits(wall_seconds=1.5))
    assert result.timed_out and not result.passed
    assert time.monotonic() - started < 4.0
    time.sleep(0.2)
    survivors = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout
    if ISOLATION == "rlimits-only":
        subprocess.run(["pkill", "-f", f"sleep {marker}"])  # the documented gap without a pid namespace
    else:
        assert survivors == ""


def test_memory_hog_fails_under_the_address_space_limit() -> None:
    result = run_program("block = bytearray(3 * 1024 ** 3)\n", SandboxLimits(wall_seconds=5))
    assert not result.passed and not result.timed_out
    assert "MemoryError" in result.stderr_tail


@pytest.mark.skipif(os.geteuid() != 0, reason="write isolation comes from dropping root to nobody; a normal "
                    "user's sandbox keeps that user's permissions (documented in bench/humaneval_exec.py)")
def test_a_program_cannot_write_outside_its_directory() -> None:
    assert ISOLATION == "netns+nobody"
    host_dir = Path(tempfile.mkdtemp(prefix="dcomplete-host-"))  # under /tmp: every ancestor is traversable
    host_dir.chmod(0o755)
    try:
        _attempt_writes(host_dir)
    finally:
        shutil.rmtree(host_dir)


def _attempt_writes(host_dir: Path) -> None:
    existing = host_dir / "existing.txt"
    existing.write_text("host data\n")
    target = host_dir / "planted.txt"
    plant = f"open({str(target)!r}, 'w').write('x')\n"
    clobber = (f"assert open({str(existing)!r}).read() == 'host data\\n'\n"
               f"open({str(existing)!r}, 'w').write('!')\n")
    results = run_programs([plant, clobber], workers=2)
    assert not any(r.passed for r in results)
    assert all("PermissionError" in r.stderr_tail for r in results)
    assert not target.exists() and existing.read_text() == "host data\n"


@pytest.mark.skipif(ISOLATION == "rlimits-only", reason="no network namespace on this host (documented)")
def test_a_program_cannot_reach_a_host_socket() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.5)
        port = server.getsockname()[1]
        program = ("import socket\n"
                   f"socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'hello')\n")
        result = run_program(program)
        assert not result.passed
        assert "Network is unreachable" in result.stderr_tail
        with pytest.raises(socket.timeout):
            server.accept()


def test_santacoder_exact_match_follows_the_qwen_first_line_rule() -> None:
    canonical = "    return result"
    assert santacoder_exact_match("    return result\n    print(x)\n", canonical)
    assert santacoder_exact_match("return result  ", canonical)
    assert santacoder_exact_match("\n    return result\n", canonical)
    assert santacoder_exact_match(" \n  return result", canonical)
    assert not santacoder_exact_match("\n\n    return result", canonical)
    assert not santacoder_exact_match("    return result + 1", canonical)
    assert not santacoder_exact_match("", canonical)
    assert santacoder_first_line("x = 1\ny = 2") == "x = 1"


def test_parse_rate_rule() -> None:
    assert parses("def f():\n    return 1\n")
    assert not parses("def f(:\n")
    assert not parses("x = 1\x00\n")


def test_similar_line_baseline_copies_the_closest_context_line_at_the_gap_indentation() -> None:
    task = InfillTask(task_id="t", prefix="def f(path_a, path_b):\n    first = load(path_a)\n"
                      "    count = 0\n    second = load(path_b)\n",
                      suffix="    count += 1\n    return other(path_b)\n", middle="")
    assert most_similar_line(task) == "    first = load(path_a)\n"
    opens_block = InfillTask(task_id="t", prefix="def f(path_a):\n    first = load(path_a)\n"
                             "    if second_load(path_a):\n", suffix="    return 1\n", middle="")
    assert most_similar_line(opens_block) == "        first = load(path_a)\n"
    assert gap_indentation("    if x:") == "        " and gap_indentation("    y = 1") == "    "
    assert BASELINES["empty"](task) == ""
    assert most_similar_line(InfillTask(task_id="t", prefix="\n\n", suffix="", middle="")) == ""


def test_baselines_produce_text_for_every_single_line_task(single_line: dict[str, InfillTask]) -> None:
    completions = [most_similar_line(task) for task in single_line.values()]
    assert all(c.strip() and c.endswith("\n") for c in completions)


def test_cli_runs_the_baselines_and_ends_with_one_json_line() -> None:
    command = [sys.executable, "-m", "bench.quality", "--model", "none", "--limit", "3",
               "--benchmarks", "single,santacoder"]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    report = json.loads(lines[-1])
    assert report["n"] == {"single": 3, "multi": 0, "santacoder": 3}
    assert report["rows"]["baseline/empty"]["pass_at_1_multi"] is None
    assert set(report["rows"]) == {"baseline/empty", "baseline/similar_line"}
    assert report["pass_at_1_single"] is None and report["sandbox"] == ISOLATION
    assert any(line.startswith("baseline/similar_line") for line in lines)


def test_model_rows_go_through_the_infill_api_on_a_tiny_checkpoint(tiny_dream: Path) -> None:
    from bench.quality import RowTally, model_completer, sampler_params
    from engine import Engine

    engine = Engine.load(tiny_dream)
    task = InfillTask(task_id="t", prefix="a = 1\nb = 2\n", suffix="print(total)\n", middle="total = a + b\n")
    for length in ("own", "oracle"):  # threshold 0 commits every mask in one pass: fast on a loaded CPU
        tally = RowTally()
        filled = model_completer(engine, sampler_params("fast", 0, threshold=0.0), length)(task, tally)
        assert tally.now.new_tokens > 0 and tally.now.seconds > 0
        assert filled.document.startswith(task.prefix) and filled.document.endswith(task.suffix)
        inserted = len(filled.document) - len(task.prefix) - len(task.suffix)
        assert inserted == len(filled.completion) + (1 if length == "own" else 0)



def test_knob_plot_is_written_atomically(tmp_path: Path) -> None:
    from bench.knob_plot import PLOT_THRESHOLDS, write_knob_plot

    points = [{"threshold": t, "pass_at_1_single": t / 2, "tokens_per_second": 10 * t}
              for t in PLOT_THRESHOLDS]
    png = tmp_path / "knob.png"
    write_knob_plot(points, n_single=7, png=str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [path.name for path in tmp_path.iterdir()] == ["knob.png"]
