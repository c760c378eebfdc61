"""SantaCoder-FIM per language: exact match, and whether the filled file parses with that language's grammar.

Each task's whole file is `prefix + middle + "\\n" + suffix` (bench.datasets.load_santacoder); a row's filled
file is the document its completer returned. The parse check is tree-sitter with the language's row of
infill's table (no ERROR or MISSING node), the same check dcomplete's own post-processing uses. Many of
these files are fragments (a Java method without its class's closing brace), so the canonical middles do
not parse 100% either: the filled files' parse rate is read against the canonical one.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.datasets import SANTACODER_LANGUAGES, InfillTask
from bench.tally import Filled

CODES = {language: code for code, language in SANTACODER_LANGUAGES.items()}


def santacoder_first_line(generation: str) -> str:
    """The line the SantaCoder-FIM exact match compares, exactly as Qwen2.5-Coder scores it.

    Qwen2.5-Coder `qwencoder-eval/base/benchmarks/fim-bench/hm_fim/humaneval_fim.py` (`evaluate_results`),
    copied verbatim by Open-dLLM `eval/eval_infill/compute_em_santa.py` for its DreamOn-style runs: when the
    generation starts with "\\n" or " \\n" take its second line, else its first; strip it. benchmarks.md §1
    paraphrases this as "the first non-empty generated line"; the two differ only for generations that
    open with two or more blank lines (or a blank line with other whitespace), where this rule compares ""
    and fails, as theirs does.
    """
    lines = generation.split("\n")
    if generation.startswith("\n") or generation.startswith(" \n"):
        return lines[1].strip()
    return lines[0].strip()


def santacoder_exact_match(generation: str, canonical: str) -> bool:
    return santacoder_first_line(generation) == canonical.strip()


def parses_as(document: str, language: str) -> bool:
    from infill.languages import get_language

    return not get_language(language).parse(document).root_node.has_error


def canonical_document(task: InfillTask) -> str:
    return task.prefix + task.middle + "\n" + task.suffix


def by_language(tasks: Sequence[InfillTask], filled: Sequence[Filled]) -> dict[str, dict]:
    """{code: {n, exact_match, parse_rate, canonical_parse_rate}} for each language among `tasks`."""
    scores: dict[str, dict] = {}
    for language in dict.fromkeys(task.language for task in tasks):
        pairs = [(t, f) for t, f in zip(tasks, filled) if t.language == language]
        n = len(pairs)
        scores[CODES[language]] = {
            "n": n,
            "exact_match": sum(santacoder_exact_match(f.completion, t.middle) for t, f in pairs) / n,
            "parse_rate": sum(parses_as(f.document, language) for _, f in pairs) / n,
            "canonical_parse_rate": sum(parses_as(canonical_document(t), language) for t, _ in pairs) / n,
        }
    return scores


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:5.1f}"


def format_language_table(rows: dict[str, dict]) -> str:
    """One line per row and language: exact match, parse rate of the filled files, and of the canonical ones."""
    header = f"{'method / length':<26} {'lang':>5} {'n':>5} {'EM':>6} {'parse':>6} {'canon':>6}"
    lines = [header, "-" * len(header)]
    for name, row in rows.items():
        for code, score in row.get("santacoder_by_language", {}).items():
            cells = " ".join(f"{_percent(score[key]):>6}" for key in ("exact_match", "parse_rate",
                                                                        "canonical_parse_rate"))
            lines.append(f"{name:<26} {code:>5} {score['n']:>5} {cells}")
    lines.append("SantaCoder-FIM by language, values in %: EM = exact match of the first generated line; parse ="
                 " the filled file parses with the language's tree-sitter grammar; canon = the same for the"
                 " canonical middle")
    return "\n".join(lines)
