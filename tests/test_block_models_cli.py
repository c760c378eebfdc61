"""`dcomplete infill FILE:LINE --model DIR` as a subprocess with a tiny random checkpoint of each block-diffusion
family, written in its real layout (config.json, safetensors, tokenizer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import SOURCE, dcomplete


@pytest.mark.slow
@pytest.mark.parametrize("family", ["sdar", "fast_dllm", "llada2", "diffusion_gemma"])
def test_infill_at_a_line_with_a_block_diffusion_checkpoint(family: str, tiny_block, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(SOURCE, encoding="utf-8")
    run = dcomplete("infill", "app.py:4", "--json", "--allow-errors", "--retries", "0", "--length", "10",
                    "--model", str(tiny_block(family)), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    end_of_def = {"line": 3, "character": len("def greet(name):")}
    assert [e["range"]["start"] for e in result["edits"]] == [end_of_def]
    assert result["edits"][0]["range"]["end"] == end_of_def and result["edits"][0]["new_text"]
    assert result["stats"]["forward_passes"] >= 1
