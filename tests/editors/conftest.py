from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def model_setting(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny random checkpoint (seed 0): loads in seconds on a CPU and answers deterministically.
    The editor tests check the plumbing between Neovim and the server, not the model's taste."""
    from engine.testing import make_tiny_checkpoint

    folder: Path = tmp_path_factory.mktemp("tiny_model")
    return str(make_tiny_checkpoint(folder, seed=0))
