"""Settings parsing: typed values, one problem sentence per bad key, defaults for what was rejected."""

from __future__ import annotations

from lsp_server.settings import Settings, parse_settings


def test_camel_case_section_becomes_typed_settings() -> None:
    settings, problems = parse_settings(
        {
            "dcomplete": {
                "model": "/models/dream",
                "device": "cpu",
                "steps": 8,
                "threshold": 0.8,
                "maxTokens": 32,
                "debounceMs": 0,
                "multiline": False,
                "languages": ["python"],
            }
        }
    )
    assert problems == []
    assert settings == Settings(
        model="/models/dream",
        device="cpu",
        steps=8,
        threshold=0.8,
        max_tokens=32,
        debounce_ms=0,
        multiline=False,
        languages=["python"],
    )
    assert settings.engine_device == "cpu" and Settings().engine_device is None


def test_each_bad_key_is_named_and_falls_back_alone() -> None:
    settings, problems = parse_settings({"steps": "many", "threshold": 1.5, "maxTokens": 16, "colour": "red"})
    assert settings.steps == 0 and settings.threshold == 0.9 and settings.max_tokens == 16
    assert len(problems) == 3
    assert "`steps`" in problems[0] and "Expected `int`, got `str`" in problems[0]
    assert "`threshold`" in problems[1] and "<= 1.0" in problems[1]
    assert "`colour` is unknown" in problems[2]


def test_partial_update_keeps_the_other_values() -> None:
    base, _ = parse_settings({"model": "/m", "debounceMs": 10})
    updated, problems = parse_settings({"dcomplete": {"debounceMs": 300}}, base=base)
    assert problems == [] and updated.model == "/m" and updated.debounce_ms == 300


def test_a_non_object_payload_is_reported() -> None:
    settings, problems = parse_settings(["model"])
    assert settings == Settings() and problems == [
        "dcomplete settings must be an object, got list; using defaults"
    ]
    assert parse_settings(None) == (Settings(), [])


def test_context_settings_default_on_and_reject_bad_values_by_name() -> None:
    from infill.context.builder import DEFAULT_TOKENS

    defaults = Settings()
    assert defaults.context and defaults.context_tokens == DEFAULT_TOKENS and defaults.context_files == []
    settings, problems = parse_settings({"context": False, "contextTokens": 128, "contextFiles": ["secrets/*"]})
    assert problems == [] and (settings.context, settings.context_tokens, settings.context_files) == (
        False, 128, ["secrets/*"])
    assert settings.results_key != defaults.results_key  # a suggestion made with context is not reused without
    settings, problems = parse_settings({"context": "yes", "contextTokens": -1, "contextFiles": "secrets/*"})
    assert settings == defaults and len(problems) == 3
    assert "`contextTokens`" in problems[1] and ">= 0" in problems[1]
    assert "`contextFiles`" in problems[2] and "Expected `array`" in problems[2]


def test_automatic_ms_limits_only_automatic_fills() -> None:
    from lsp_server.inference import fill_jobs

    settings, problems = parse_settings({"dcomplete": {"automaticMs": 250}})
    assert settings.automatic_ms == 250 and problems == []
    assert parse_settings({"dcomplete": {}})[0].automatic_ms == 600
    bad, problems = parse_settings({"dcomplete": {"automaticMs": -1}})
    assert bad.automatic_ms == 600 and len(problems) == 1 and "automaticMs" in problems[0]
    _, options = fill_jobs([("x = 1\n", [], None)], settings, "python", deadline_ms=settings.automatic_ms)
    assert options.line_deadline_ms == 250
    assert fill_jobs([("x = 1\n", [], None)], settings, "python")[1].line_deadline_ms is None
    assert settings.results_key != parse_settings({"dcomplete": {"automaticMs": 0}})[0].results_key
