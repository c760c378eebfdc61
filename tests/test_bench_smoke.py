"""Each benchmark runs end to end on a tiny checkpoint and ends with one JSON line carrying its keys."""

from __future__ import annotations

import json

import pytest
import torch

from bench import accept, cache, holes, lsp_latency, multispot, repo_context, speed, step

pytestmark = pytest.mark.slow


def last_json(capsys: pytest.CaptureFixture[str]) -> dict:
    lines = capsys.readouterr().out.strip().splitlines()
    return json.loads(lines[-1])


def test_speed(tiny_dream, capsys):
    speed.main(["--model", str(tiny_dream), "--cases", "1", "--context", "256"])
    out = last_json(capsys)
    assert {"speedup_vs_naive", "speedup_vs_ar", "request_speedup_vs_ar", "tokens_per_forward", "agreement"} <= out.keys()
    assert all(row["request_speedup_vs_ar"] > 0 for row in out["rows"].values())
    assert set(out["rows"]) == {"line", "16", "32", "64"}
    assert 0.0 <= out["agreement"] <= 1.0 and out["tokens_per_forward"] >= 1.0


def test_speed_pools_every_case_with_its_spread(tiny_dream, capsys):
    """`--repeat` times each request in turn and the `all` line pools the cases of every size."""
    speed.main(["--model", str(tiny_dream), "--cases", "1", "--context", "256", "--repeat", "2"])
    out = last_json(capsys)
    low, high = out["speedup_vs_ar_interval"]
    assert out["repeat"] == 2 and low <= out["speedup_vs_ar_all"] <= high


def test_speed_ratio_over_cases_and_its_interval():
    timings = [speed.Timing(1.0, 30, 2.0, 40), speed.Timing(0.5, 10, 0.5, 10)]
    # fast: 40 tokens in 1.5 s; ar: 50 in 2.5 s
    assert speed.pooled_ratio(timings) == pytest.approx((40 / 1.5) / (50 / 2.5))
    low, high = speed.ratio_interval(timings)
    alone = sorted(speed.pooled_ratio([t]) for t in timings)
    assert (low, high) == pytest.approx(tuple(alone))  # resamples of two cases span each one alone
    same = [speed.Timing(1.0, 12, 1.0, 10)] * 5
    assert speed.ratio_interval(same) == pytest.approx((1.2, 1.2))


def test_speed_refuses_a_repeat_below_one(tiny_dream):
    with pytest.raises(SystemExit, match="--repeat 0"):
        speed.main(["--model", str(tiny_dream), "--cases", "1", "--repeat", "0"])


def test_speed_on_a_random_model_of_a_named_shape(capsys, monkeypatch):
    """`--shape open-dcoder-0.5b` builds a random model of that shape, its vocabulary the shape's, not the
    tiny tokenizer's (here a small shape stands in for the 0.5B one)."""
    monkeypatch.setattr(speed, "OPEN_DCODER", dict(speed.OPEN_DCODER, vocab_size=1000, hidden_size=64,
                                                   intermediate_size=128, num_hidden_layers=2,
                                                   num_attention_heads=4, num_key_value_heads=2))
    speed.main(["--shape", "open-dcoder-0.5b", "--cases", "1", "--context", "256"])
    out = last_json(capsys)
    assert out["shape"] == "open-dcoder-0.5b" and set(out["rows"]) == {"line", "16", "32", "64"}


def test_speed_against_float32(tiny_dream, capsys):
    """A tiny model is never calibrated (its products stay float32), so its output equals the all-float32
    load's token for token."""
    speed.main(["--model", str(tiny_dream), "--cases", "1", "--context", "256", "--vs-float32"])
    out = last_json(capsys)
    assert [row["float32_agreement"] for row in out["rows"].values()] == [1.0] * 4


def test_step(tiny_anchored, capsys):
    """The step's parts are measured apart: a decoding step's attention among them (recorded through the
    decoding attention, whichever form it takes)."""
    step.main(["--model", str(tiny_anchored), "--contexts", "48", "--rows", "1,3", "--repeats", "1", "--no-reference"])
    printed = last_json(capsys)
    out = printed["results"]["48"]
    for rows in ("1", "3"):
        assert {"step", "products", "attn", "rest", "linear", "head", "attention", "adapter"} <= out[rows].keys()
        # where dcomplete's attention and norm kernels serve, the step on torch's forms is timed beside it
        assert ("on_torch" in out[rows]) == bool(printed["native_kernels"])
        assert out[rows]["attention"] > 0 and 0 < out[rows]["rest"] and out[rows]["step"] > 0
    assert out["prefill"]["step"] > 0
    from engine import Engine
    from engine.models import anchored

    engine = Engine.load(tiny_anchored, device="cpu")
    ours = step.OurStep(engine, *step.context_ids(engine, 48), adapter=True)
    with step.Recorder() as recorder:
        ours.predict(3)
    recorded = [fn for fn, _, _ in recorder.calls]
    layers = engine.loaded.model.shape.num_hidden_layers
    assert recorded.count(anchored.decoding_attention) == layers
    # removal: the frozen products answer what they answered, once per product of the step (not the inner
    # calls of a product), so the step's logits stay the same without their work
    expected = ours.predict(3)
    frozen = step.Frozen(step.PRODUCTS + step.ATTENTION)
    frozen.record(lambda: ours.predict(3))
    assert len(frozen.outputs) == 4 * layers + 1 + layers
    with frozen:
        assert torch.equal(ours.predict(3), expected) and torch.equal(ours.predict(3), expected)
    assert frozen.next == 2 * len(frozen.outputs)


def test_multispot(tiny_dream, capsys):
    multispot.main(["--model", str(tiny_dream), "--files", "1", "--context", "384", "--spots", "1,3"])
    out = last_json(capsys)
    assert out["multispot_speedup_3"] > 0
    rows = out["rows"]
    # one canvas with 3 spots needs fewer forwards than 3 separate requests (spans advance side by side)
    assert rows["3"]["forwards_one_run"] < rows["3"]["forwards_separate"]


def test_cache(tiny_dream, capsys):
    cache.main(["--model", str(tiny_dream), "--tokens", "768", "--repeats", "1"])
    out = last_json(capsys)
    assert out["warm_speedup"] > 0 and 0.0 <= out["agreement"] <= 1.0


def test_lsp_latency(tiny_dream, capsys):
    lsp_latency.main(["--model", str(tiny_dream), "--keystrokes", "6", "--gap-ms", "40"])
    out = last_json(capsys)
    assert out["keystrokes"] == 6 and out["p50_ms"] > 0


def test_lsp_latency_with_the_context_off(tiny_dream, capsys):
    lsp_latency.main(["--model", str(tiny_dream), "--keystrokes", "3", "--gap-ms", "40", "--pauses", "1",
                      "--accepts", "0", "--context", "off"])
    out = last_json(capsys)
    assert out["context"] == "off" and out["file"].endswith(".py")
    assert len(out["paused_slowest"]) == 1 and out["paused_slowest"][0]["ms"] > 0


def test_repo_context(tiny_anchored, capsys):
    """Two holes of the vendored packages, with and without the builder's header."""
    repo_context.main(["--model", str(tiny_anchored), "--limit", "2"])
    out = last_json(capsys)
    assert out["total"]["n"] == 2 and out["total"]["context_tokens"] > 0
    assert all(0.0 <= out["total"][k]["exact_match"] <= 1.0 for k in ("with", "without"))


def test_accept(tiny_anchored, capsys):
    """Real tasks from the installed packages, through the language server's path, both samplers."""
    accept.main(["--model", str(tiny_anchored), "--lines", "3", "--blocks", "2"])
    out = last_json(capsys)
    assert set(out["rows"]) == {"fast", "ar"}
    for rows in out["rows"].values():
        assert rows["line"]["n"] == 3 and rows["block"]["n"] == 2
        assert all(0.0 <= r[key] <= 1.0 for r in rows.values() for key in ("shown", "exact", "prefix", "similarity"))


def test_accept_scores_what_a_user_would_take():
    task = accept.Task("line", "x.py", "def f(a):\n    \n", 14, "return a + 1")
    assert accept.score(task, None)["shown"] == 0.0
    same = accept.score(task, "return a + 1")
    assert same["exact"] == same["prefix"] == same["similarity"] == same["parses"] == 1.0
    partial = accept.score(task, "return a")
    assert partial["exact"] == 0.0 and partial["prefix"] == 0.0  # shares 8 characters, fewer than 10
    longer = accept.score(accept.Task("line", "x.py", task.text, 14, "return a.value"), "return a.value + other")
    assert longer["prefix"] == 1.0 and longer["exact"] == 0.0 and 0.5 < longer["similarity"] < 1.0
    assert accept.score(task, "return (a")["parses"] == 0.0


def test_holes_never_leave_a_file_broken(tiny_anchored, capsys):
    """The random model's noise breaks the parse often: each hole file is filled and parses, or keeps its
    marker (and parses as it did), never neither."""
    holes.main(["--model", str(tiny_anchored), "--limit", "4", "--workers", "1"])
    out = last_json(capsys)
    assert out["broken"] == 0 and out["filled_parsing"] + out["marker_kept"] == out["tasks"] == 4


def test_compiled_products(tiny_anchored, capsys, tmp_path):
    """Inductor compiles each product of the tiny model with its own weight: the compiled int8 product
    agrees with torch's eager int8 kernel on the same weights, within bfloat16 rounding."""
    from bench import compiled_products

    compiled_products.main(["--model", str(tiny_anchored), "--layers", "2", "--rows", "1,2", "--rounds", "1",
                            "--dynamic", "--threads", "1", "--paths", "today,eager_int8,compiled_int8",
                            "--cache", str(tmp_path / "inductor")])
    out = last_json(capsys)
    assert set(out["ms"]) == {"1", "2"} and all(v > 0 for row in out["ms"].values() for v in row.values())
    eager, compiled = out["errors"]["eager_int8"], out["errors"]["compiled_int8"]
    assert compiled["rel"] < 2 * eager["rel"] + 0.01
    assert out["keeps_rows"]["compiled_int8"]
