"""`remote.serve.routing` without Ray: which document a request names in each endpoint's shape, and which
replica gets it (the document's while it is up and not much busier, else the least loaded)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from remote.serve.routing import Router, RoutingConfig, document_key


def key(body: object, supersede: str | None = None) -> str | None:
    return document_key(json.dumps(body).encode(), supersede)


def test_each_endpoint_names_its_document() -> None:
    assert key({"input_prefix": "x", "id_slot": 3}) == "slot:3"
    assert key({"input_prefix": "x", "id_slot": 3, "cache_prompt": False}) == key({"input_prefix": "x"})
    assert key({"canvases": [{"ids": [1, 2], "doc_id": "file:///a.py"}]}) == "doc:file:///a.py"
    assert key({"segments": {"prefix": "p", "filepath": "src/a.py"}}) == "file:src/a.py"
    assert key({"prompt": "p"}, supersede="file:///a.py") == "supersede:file:///a.py"


def test_without_a_name_the_leading_text_is_the_document() -> None:
    head = "import os\n" * 100  # longer than the part hashed
    assert key({"prompt": head + "a"}) == key({"prompt": head + "b"}) == key({"prompt": [head]})
    assert key({"prompt": "import sys\n"}) != key({"prompt": head})
    assert key({"text": head}) == key({"prompt": head}) == key({"input_prefix": head})
    assert key({"canvases": [{"ids": [1, 2, 3]}]}) != key({"canvases": [{"ids": [1, 2, 4]}]})


def test_a_body_the_replica_will_refuse_names_nothing() -> None:
    assert document_key(b"") is None
    assert document_key(b"{not json") is None
    assert document_key(b"[" * 100_000) is None
    assert key({"prompt": 3}) is None
    assert key({"model": "m"}) is None


def test_a_document_stays_on_its_replica_while_it_is_up_and_not_much_busier() -> None:
    router = Router(2, RoutingConfig(slack=2))
    first = router.choose("a")
    assert first is not None and first.kind == "cold"
    home = first.replica
    for _ in range(2):  # its replica now holds 3 in flight against 0
        route = router.choose("a")
        assert route is not None and (route.replica, route.kind) == (home, "warm")
    moved = router.choose("a")
    assert moved is not None and (moved.replica, moved.kind) == (1 - home, "moved")
    for replica in (home, home, home, 1 - home):
        router.done(replica)
    again = router.choose("a")  # its keys/values are now on the replica it moved to
    assert again is not None and (again.replica, again.kind) == (1 - home, "warm")


def test_new_and_keyless_requests_go_to_the_least_loaded() -> None:
    router = Router(3)
    routes = [router.choose(None) for _ in range(3)]
    assert sorted(r.replica for r in routes if r) == [0, 1, 2] and {r.kind for r in routes if r} == {"keyless"}
    router.done(1)
    route = router.choose("new")
    assert route is not None and (route.replica, route.kind) == (1, "cold")


def test_a_failed_replica_is_left_out_until_revived_and_its_documents_move() -> None:
    router = Router(2)
    home = router.choose("a")
    assert home is not None
    router.done(home.replica)
    router.failed(home.replica)
    route = router.choose("a")
    assert route is not None and (route.replica, route.kind) == (1 - home.replica, "cold")
    assert router.choose("b", avoid=frozenset({1 - home.replica})) is None  # the only other one is avoided
    router.failed(1 - home.replica)
    assert router.choose(None) is None
    router.revived(home.replica)
    assert router.choose(None) is not None


def test_without_affinity_every_request_goes_to_the_least_loaded() -> None:
    router = Router(2, RoutingConfig(affinity=False))
    first = router.choose("a")
    second = router.choose("a")
    assert first is not None and second is not None and first.replica != second.replica
    assert second.kind == "moved"


@pytest.mark.parametrize(("flags", "says"), [
    (["--replicas", "0"], "--replicas 0: must be at least 1"),
    (["--port", "0"], "--port 0: must be at least 1"),
    (["--ray-gpus-per-replica", "-1"], "--ray-gpus-per-replica -1.0: must be at least 0"),
    (["--host", "0.0.0.0"], "--host 0.0.0.0 is not a loopback address"),
])
def test_bad_replica_flags_are_one_line_and_exit_2(flags: list[str], says: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DCOMPLETE_API_KEY"}
    run = subprocess.run([sys.executable, "-m", "cli", "engine", "--ray", *flags], capture_output=True, text=True,
                         timeout=60, env=env)
    assert run.returncode == 2 and says in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
