"""The pieces the client shapes are taken apart and put together with: FIM-templated prompts split at their
markers, other files' chunks kept within their share of the context, llama-server's `response_fields`."""

from __future__ import annotations

from infill.canvas import encode
from remote.server.fim_prompt import split_fim
from remote.server.llama_api import pick
from remote.server.other_files import other_files_above
from tests.support.checkpoints import tiny_tokenizer


def test_fim_prompts_split_at_their_markers_and_plain_prompts_do_not():
    assert split_fim("<fim_prefix># a.py\nx = <fim_suffix>\ny = 2\n<fim_middle>") == ("# a.py\nx = ", "\ny = 2\n")
    assert split_fim("<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>") == ("a", "b")
    assert split_fim("<PRE> a <SUF>b <MID>") == ("a", "b")
    assert split_fim("x = 1  # <fim_middle>") is None  # no prefix marker: the text is code
    assert split_fim("def f():\n    return") is None


def test_other_files_keep_the_most_relevant_chunks_that_fit_their_share():
    tokenizer = tiny_tokenizer()
    chunks = [("old.py", "a = 1\n" * 100), ("near.py", "b = 2\n" * 5), ("blank.py", "  \n")]
    text = other_files_above(chunks, "#", tokenizer, 300)
    assert len(encode(tokenizer, text)) <= 100
    assert text.index("# old.py\na = 1\n") < text.index("# near.py\n" + "b = 2\n" * 5)  # the nearest stays whole
    assert "blank.py" not in text and text.count("a = 1") < 100  # the oldest is cut to its first lines


def test_response_fields_are_moved_to_the_top_under_their_full_names():
    full = {"content": "x", "timings": {"prompt_n": 3}, "tokens_cached": 0}
    assert pick(full, ["content", "timings/prompt_n", "timings/missing", ""]) == {"content": "x",
                                                                                  "timings/prompt_n": 3}
