"""The pieces the client shapes are taken apart and put together with: FIM-templated prompts split at their
markers, other files' chunks kept within their share of the context (`extra_context`), llama-server's `response_fields`."""

from __future__ import annotations

from infill.canvas import encode
from remote.server.extra_context import client_chunks, extra_header
from remote.server.fim_prompt import split_fim
from remote.server.llama_api import pick
from tests.support.checkpoints import tiny_tokenizer


def test_fim_prompts_split_at_their_markers_and_plain_prompts_do_not():
    assert split_fim("<fim_prefix># a.py\nx = <fim_suffix>\ny = 2\n<fim_middle>") == ("# a.py\nx = ", "\ny = 2\n")
    assert split_fim("<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>") == ("a", "b")
    assert split_fim("<PRE> a <SUF>b <MID>") == ("a", "b")
    assert split_fim("x = 1  # <fim_middle>") is None  # no prefix marker: the text is code
    assert split_fim("def f():\n    return") is None


def test_other_files_keep_the_most_relevant_pieces_that_fit_their_share():
    tokenizer = tiny_tokenizer()
    given = [("old.py", "a = 1\n" * 100), ("near.py", "b = 2\n" * 5), ("blank.py", "  \n"), ("old.py", "c = 3\n" * 3)]
    text = extra_header(client_chunks(given), "#", tokenizer, 300)
    assert len(encode(tokenizer, text)) <= 100
    assert "# near.py\n" + "b = 2\n" * 5 in text  # the most relevant stay whole
    assert "c = 3\n" * 3 in text and text.index("a = 1") < text.index("c = 3")  # one file's chunks in order
    assert "blank.py" not in text and 0 < text.count("a = 1") < 100  # the oldest keeps what fits


def test_a_file_s_pieces_keep_its_chunks_together_and_rank_later_chunks_higher():
    pieces = client_chunks([("a.py", "x = 1\n" * 40), ("b.py", "y = 2\n")], kind="definition", rank=3)
    assert [(p.path, p.line, p.kind) for p in pieces] == [("a.py", 0, "definition"), ("a.py", 16, "definition"),
                                                          ("a.py", 32, "definition"), ("b.py", 0, "definition")]
    assert pieces[0].score > pieces[1].score > pieces[2].score and pieces[3].score > pieces[0].score >= 3


def test_response_fields_are_moved_to_the_top_under_their_full_names():
    full = {"content": "x", "timings": {"prompt_n": 3}, "tokens_cached": 0}
    assert pick(full, ["content", "timings/prompt_n", "timings/missing", ""]) == {"content": "x",
                                                                                  "timings/prompt_n": 3}
