"""Shared fixtures: tiny random checkpoints written in Hugging Face format, once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.checkpoints import make_tiny_checkpoint


@pytest.fixture(scope="session")
def tiny_dream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny_dream"), family="dream")


@pytest.fixture(scope="session")
def tiny_llada(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny_llada"), family="llada")


@pytest.fixture(scope="session")
def tiny_anchored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.checkpoints import make_tiny_anchored

    return make_tiny_anchored(tmp_path_factory.mktemp("tiny_anchored"))
