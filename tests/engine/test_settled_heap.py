"""A serving process loads its engine with the cyclic collector paused and freezes what the load built
(`remote.engines.settled_heap`); each case runs in a process of its own, since a frozen heap would outlive
the test in pytest's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, sys
from remote.engines import open_engine
seen = {}
real_load = None
from engine import Engine
real_load = Engine.load.__func__
def load(cls, *args, **kwargs):
    seen["collector during the load"] = gc.isenabled()
    return real_load(cls, *args, **kwargs)
Engine.load = classmethod(load)
try:
    engine = open_engine(sys.argv[1], serving=sys.argv[2] == "serving")
    seen["loaded"] = engine.family
except Exception as error:
    seen["error"] = type(error).__name__
seen["collector after"] = gc.isenabled()
seen["frozen"] = gc.get_freeze_count()
print(json.dumps(seen))
"""


def probe(model: str, mode: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", PROBE, model, mode], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_serving_load_pauses_the_collector_and_freezes_what_it_built(tiny_anchored: Path) -> None:
    seen = probe(str(tiny_anchored), "serving")
    assert seen["loaded"] == "anchored"
    assert seen["collector during the load"] is False
    assert seen["collector after"] is True
    assert int(seen["frozen"]) > 10_000  # torch's modules and the model's, at least


def test_a_load_that_is_not_serving_leaves_the_heap_alone(tiny_anchored: Path) -> None:
    seen = probe(str(tiny_anchored), "once")
    assert seen["collector during the load"] is True and seen["collector after"] is True
    assert seen["frozen"] == 0


def test_a_failed_load_resumes_the_collector_and_freezes_nothing(tmp_path: Path) -> None:
    seen = probe(str(tmp_path / "no such model"), "serving")
    assert seen["error"] == "ModelLoadError"
    assert seen["collector during the load"] is False
    assert seen["collector after"] is True and seen["frozen"] == 0


SWITCH = """
import gc, json, sys, weakref
from lsp_server.inference import InferenceBackend
from lsp_server.settings import Settings
backend = InferenceBackend()
assert backend.ensure_loaded(Settings(model=sys.argv[1], context=False)) is None
first = weakref.ref(backend._engine.loaded.model)
assert backend.ensure_loaded(Settings(model=sys.argv[2], context=False)) is None
gc.collect()
print(json.dumps({"first freed": first() is None, "frozen": gc.get_freeze_count()}))
"""


def test_a_language_server_whose_settings_name_another_model_frees_the_first(tiny_anchored: Path,
                                                                             tiny_dream: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SWITCH, str(tiny_anchored), str(tiny_dream)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["first freed"] is True and seen["frozen"] > 10_000
