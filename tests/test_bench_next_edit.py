"""bench.next_edit: the vendored release-diff tasks are what their manifest says and internally consistent;
the rename baseline repeats a replacement where it should and stays silent where it should; the metrics
score a perfect suggester and a silent one as they must."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench import next_edit
from bench.next_edit import SuggesterOptions, is_reversal, run, summarize
from bench.next_edit_baselines import never, rename
from bench.next_edit_tasks import ARCHIVE, DATA, Hunk, Suggestion, Task, cursor_line, load_tasks, same_change
from infill.next_edit.rule import replacement
from training.sdist import canonical_name, licence_family

REPO = Path(__file__).resolve().parents[1]
TASKS = load_tasks()
MANIFEST = json.loads((DATA / "MANIFEST.json").read_text(encoding="utf-8"))
ROWS = [json.loads(line) for line in (DATA / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]


def oracle(task: Task) -> Suggestion | None:
    """The smallest edit turning `current` into `expected`; none when they are equal."""
    current, expected = task.current, task.expected
    if current == expected:
        return None
    head = 0
    while current[head] == expected[head]:
        head += 1
    tail = 0
    while tail < min(len(current), len(expected)) - head and current[-1 - tail] == expected[-1 - tail]:
        tail += 1
    return Suggestion(head, len(current) - tail, expected[head : len(expected) - tail])


def oracle_factory(options: SuggesterOptions) -> next_edit.Suggester:
    return oracle


def make_task(before: str, user: Hunk, kind: str = "related", target: Hunk | None = None) -> Task:
    current = user.apply(before.split("\n"))
    expected = target.apply(current) if target else current
    return Task("t", "pkg", "1", "2", "m.py", kind, before, "\n".join(current),  # type: ignore[arg-type]
                "\n".join(expected), user, target, cursor_line(user, len(current)))


# --- the vendored set ----------------------------------------------------------------------------------


def test_enough_tasks_spread_over_enough_packages() -> None:
    kinds = Counter(t.kind for t in TASKS)
    per_package = Counter(t.package for t in TASKS)
    assert len(TASKS) >= 200 and kinds["noise"] >= 50 and kinds["related"] >= 150
    assert len(per_package) >= 6
    assert max(per_package.values()) <= MANIFEST["related_per_package"] + MANIFEST["noise_per_package"]
    assert max(per_package.values()) < 0.25 * len(TASKS)
    assert len({t.id for t in TASKS}) == len(TASKS)
    assert (MANIFEST["tasks"], MANIFEST["related"], MANIFEST["noise"]) == (len(TASKS), kinds["related"], kinds["noise"])


def test_every_task_is_consistent() -> None:
    for task, row in zip(TASKS, ROWS):
        before, current = task.before.split("\n"), task.current.split("\n")
        assert len(before) <= MANIFEST["max_lines"], task.id
        assert task.user_edit.apply(before) == current, task.id
        assert row["user_edit"]["old_lines"] == before[task.user_edit.start - 1 : task.user_edit.end], task.id
        assert task.user_edit.size <= MANIFEST["max_changed_lines"], task.id
        assert 1 <= task.cursor_line <= len(current), task.id
        if task.user_edit.new:
            assert current[task.cursor_line - 1] == task.user_edit.new[-1], task.id
        assert task.language == "python" and task.path.endswith(".py")
        assert not any(part in ("tests", "test", "docs") for part in Path(task.path).parts), task.id
        if task.kind == "noise":
            assert task.target is None and task.expected == task.current, task.id
            continue
        target = task.target
        assert target is not None and task.expected != task.current, task.id
        assert 1 <= target.start and target.end <= len(current), task.id
        assert current[target.start - 1 : target.end] == list(target.old), task.id
        assert target.size <= MANIFEST["max_changed_lines"], task.id
        assert task.relation is not None and task.relation.names_something, task.id
        user_last = task.user_edit.start + len(task.user_edit.new) - 1
        for other in (target, *task.alternatives):
            assert other.end < task.user_edit.start or other.start > user_last, task.id
            assert other.apply(current) != current, task.id


def test_related_targets_share_a_change_with_the_user_edit() -> None:
    """Recomputed from the hunks: the stored relation is a change the user's edit, the target and every
    alternative all make."""
    for task in TASKS:
        if task.target is None:
            continue
        for other in (task.target, *task.alternatives):
            assert same_change(task.user_edit, other) is not None, task.id
        assert task.relation == same_change(task.user_edit, task.target), task.id


def test_manifest_packages_are_permissive_new_and_small() -> None:
    corpus = json.loads((REPO / "training" / "corpus_manifest.json").read_text(encoding="utf-8"))
    repo_context = json.loads((REPO / "bench/data/repo_context/MANIFEST.json").read_text(encoding="utf-8"))
    taken = {canonical_name(p["name"]) for p in corpus["packages"] + repo_context["packages"]}
    names = {canonical_name(p["name"]) for p in MANIFEST["packages"]}
    assert not names & taken
    assert names == {t.package for t in TASKS}
    for entry in MANIFEST["packages"]:
        assert licence_family(tuple(entry["licence_fields"])) == entry["licence"], entry["name"]
        assert entry["licence_files"] and all(len(r["sdist_sha256"]) == 64 for r in entry["releases"])
        versions = [r["version"] for r in entry["releases"]]
        assert [(p["from"], p["to"]) for p in entry["pairs"]] == list(zip(versions, versions[1:]))
    total = sum(f.stat().st_size for f in DATA.iterdir())
    assert total < 1_000_000 and ARCHIVE.stat().st_size < 500_000


# --- the rename baseline -------------------------------------------------------------------------------

RENAMED = """def handler(request):
    return JsonResponse(request.data)


def other(request):
    return JsonResponse({"ok": True})


def third():
    return JsonResponseFactory()"""


def test_rename_repeats_the_replacement_below_the_cursor() -> None:
    user = Hunk(2, ("    return JsonResponse(request.data)",), ("    return self.render(request.data)",))
    target = Hunk(6, ("    return JsonResponse({\"ok\": True})",), ("    return self.render({\"ok\": True})",))
    task = make_task(RENAMED, user, target=target)
    assert replacement("\n".join(user.old), "\n".join(user.new)) == ("JsonResponse", "self.render")
    suggestion = rename(task)
    assert suggestion is not None and suggestion.apply(task.current) == task.expected
    assert summarize(run(rename, [task]))["exact"] == 1.0
    assert not is_reversal(task, suggestion)


def test_rename_wraps_above_and_respects_word_boundaries() -> None:
    user = Hunk(6, ("    return JsonResponse({\"ok\": True})",), ("    return self.render({\"ok\": True})",))
    task = make_task(RENAMED, user)
    suggestion = rename(task)
    assert suggestion is not None
    after = suggestion.apply(task.current).split("\n")
    assert after[1] == "    return self.render(request.data)"
    assert after[9] == "    return JsonResponseFactory()"


def test_rename_carries_a_call_shape_change() -> None:
    before = "a = f(x)\nb = 2\nc = f(x)\nd = f(y)"
    task = make_task(before, Hunk(1, ("a = f(x)",), ("a = f(x, strict=True)",)))
    assert replacement("\n".join(task.user_edit.old), "\n".join(task.user_edit.new)) == ("x", "x, strict=True")
    suggestion = rename(task)
    assert suggestion is not None and suggestion.apply(task.current).split("\n")[2] == "c = f(x, strict=True)"


def test_rename_is_silent_without_a_replacement_or_a_place() -> None:
    before = "x = 1\ny = 2\nz = old_name"
    inserted = make_task(before, Hunk(2, (), ("w = 3",)), kind="noise")
    deleted = make_task(before, Hunk(2, ("y = 2",), ()), kind="noise")
    nowhere = make_task(before, Hunk(1, ("x = 1",), ("x = 10",)), kind="noise")
    assert [rename(t) for t in (inserted, deleted, nowhere)] == [None, None, None]
    elsewhere = make_task(before, Hunk(3, ("z = old_name",), ("z = new_name",)), kind="noise")
    assert rename(elsewhere) is None  # the only line holding old_name is the user's own
    summary = summarize(run(rename, [inserted, deleted, nowhere, elsewhere]))
    assert summary["no_edit_precision"] == 1.0 and summary["related"] == 0


# --- metrics -------------------------------------------------------------------------------------------


def test_a_perfect_suggester_scores_exact_and_quiet() -> None:
    summary = summarize(run(oracle, TASKS))
    assert summary["exact"] == summary["exact_any"] == summary["location"] == summary["suggestion_rate"] == 1.0
    assert summary["no_edit_precision"] == 1.0 and summary["reversal_rate"] == 0.0
    sides = summary["by_direction"]
    assert sides["below"]["related"] + sides["above"]["related"] == summary["related"]
    assert min(sides["below"]["related"], sides["above"]["related"]) > 0
    assert sides["below"]["exact"] == sides["above"]["exact"] == 1.0


def test_the_silent_suggester_is_quiet_and_never_right() -> None:
    summary = summarize(run(never, TASKS))
    assert summary["no_edit_precision"] == 1.0
    assert summary["exact"] == summary["location"] == summary["suggestion_rate"] == 0.0
    assert summary["reversal_rate"] is None and summary["suggestions"] == 0


def test_undoing_the_user_edit_is_a_reversal() -> None:
    user = Hunk(2, ("    return JsonResponse(request.data)",), ("    return self.render(request.data)",))
    task = make_task(RENAMED, user)
    line_start = task.current.index("    return self.render")
    line_end = task.current.index("\n", line_start)
    undo = Suggestion(line_start, line_end, "    return JsonResponse(request.data)")
    partial = Suggestion(line_start, line_end, "    return JsonResponse(request.data, status=200)")
    assert is_reversal(task, undo) and is_reversal(task, partial)
    assert not is_reversal(task, Suggestion(line_start, line_end, "    return self.render(request.data, 1)"))
    rows = run(lambda t: undo, [task])
    assert summarize(rows)["reversal_rate"] == 1.0 and not rows[0]["exact"]


def test_a_suggestion_that_changes_nothing_counts_as_none_and_one_out_of_range_as_wrong() -> None:
    task = TASKS[0]
    assert summarize(run(lambda t: Suggestion(0, 5, t.current[:5]), [task]))["suggestions"] == 0
    wrong = summarize(run(lambda t: Suggestion(0, len(t.current) + 1, ""), [task]))
    assert wrong["suggestions"] == wrong["invalid"] == 1 and not wrong["exact"]


def test_cli_runs_named_and_imported_suggesters(capsys: pytest.CaptureFixture[str]) -> None:
    code = next_edit.main(["--limit", "30", "--suggesters",
                           "none,rename,tests.test_bench_next_edit:oracle_factory"])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and report["benchmark"] == "next_edit" and report["tasks"] == 30
    assert set(report["suggesters"]) == {"none", "rename", "tests.test_bench_next_edit:oracle_factory"}
    assert report["suggesters"]["tests.test_bench_next_edit:oracle_factory"]["exact"] == 1.0


def test_cli_rejects_an_unknown_suggester(capsys: pytest.CaptureFixture[str]) -> None:
    assert next_edit.main(["--suggesters", "nonesuch"]) == 2
    assert "unknown suggester 'nonesuch'" in capsys.readouterr().err
