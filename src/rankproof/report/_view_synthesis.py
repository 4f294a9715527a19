"""The eval report's ``synthesis`` field as view tables: one source for every format.

The terminal (`rankproof.report.eval.eval_tables`), ``eval -f md`` and every
format of ``rankproof report`` (Markdown, HTML, LaTeX through the view) show
the same tables: what was synthesized and how (provider, stage, prompt digest,
calls, cache hits, tokens, failures by reason, the echo check, the judge), the
mean of each metric, and — outside the terminal — each query's answer. Every
cell is plain text (answers are data: each renderer escapes it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rankproof.report._view_parts import fmt
from rankproof.report.view import Table

#: Characters of an answer shown in a table (the JSON keeps it whole).
ANSWER_CLIP = 160


def _clip(text: str, limit: int = ANSWER_CLIP) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _failures(failures: Mapping[str, Any]) -> str:
    return ", ".join(f"{r} {n}" for r, n in failures.items()) or "none"


def synthesis_summary(s: Mapping[str, Any]) -> Table:
    """What was synthesized, from what, by whom, at what cost, and what failed."""
    prov = s.get("provider") or {}
    rows: list[tuple[str, str]] = [
        ("provider", f"{prov.get('name')} ({prov.get('model')}) at {prov.get('base_url')}"),
        ("passages", f"top {s.get('k')} of stage {s.get('stage')} ({s.get('selected_by')})"),
        ("prompt template", f"{s.get('prompt_template_digest')} ({s.get('prompt_source')})"),
        ("answers", f"{s.get('answered')} of {s.get('queries')} answerable queries "
                    f"({s.get('failed')} failed: {_failures(s.get('failures') or {})})"),
        ("calls", f"{s.get('calls')} made, {s.get('cache_hits')} from the cache, "
                  f"{s.get('retries')} retried"),
        ("tokens", f"{s.get('prompt_tokens')} prompt, {s.get('completion_tokens')} completion"
                   + (f", cost {s['cost']:.4f}" if isinstance(s.get("cost"), int | float)
                      else "")),
    ]
    echo = s.get("echo_check")
    if isinstance(echo, Mapping):
        rows.append(("echo check", f"{'passed' if echo.get('passed') else 'FAILED'}: cited "
                                   f"{echo.get('cited')}, marker in passage "
                                   f"[{int(echo.get('planted_index', 0)) + 1}] "
                                   f"({echo.get('artifact')})"))
    judge = s.get("judge")
    if isinstance(judge, Mapping):
        ident = judge.get("identity") or {}
        rows.append(("judge", f"{ident.get('model')} at {judge.get('endpoint')}: "
                              f"{judge.get('calls')} call(s), {judge.get('n_errors')} failed "
                              f"({_failures(judge.get('failures') or {})}), mean "
                              f"{fmt(judge.get('mean'))} (advisory)"))
    # The synthesis caveats are the report's own caveats too: shown once, with them.
    notes = (str(s.get("advisory", "")),)
    return Table(key="synthesis", title=f"synthesis: {s.get('answered')} answers from stage "
                 f"{s.get('stage')}", columns=("what", "value"), rows=tuple(rows),
                 notes=tuple(n for n in notes if n))


def synthesis_means(s: Mapping[str, Any]) -> Table:
    """The mean of every metric over the answers it scored."""
    means = s.get("means") or {}
    unscored = s.get("unscored") or {}
    answered = int(s.get("answered") or 0)
    rows = tuple((str(m), fmt(means.get(m)), str(answered - len(unscored.get(m, ()))))
                 for m in s.get("metrics", ()))
    return Table(key="synthesis-means", title="synthesis means",
                 columns=("metric", "mean", "answers"), rows=rows,
                 numeric=(False, True, True))


def synthesis_cases(s: Mapping[str, Any]) -> Table:
    """One row per query: its answer (clipped), what it cites, grounding, the judge."""
    judged = "judge_score" in (s.get("metrics") or ())
    rows = []
    for case in s.get("cases", ()):
        scores = case.get("scores") or {}
        answer = case.get("answer")
        cells = (str(case.get("query_id")),
                 _clip(str(answer)) if answer is not None else f"(failed: {case.get('error')})",
                 ", ".join(str(n) for n in case.get("cited", ())) or "—",
                 fmt(scores.get("grounding")), fmt(scores.get("grounding_cited")))
        rows.append((*cells, fmt(scores.get("judge_score"))) if judged else cells)
    columns = ("query", "answer", "cited", "grounding", "grounding_cited")
    return Table(key="synthesis-cases", title="synthesis: the answers",
                 columns=(*columns, "judge_score") if judged else columns, rows=tuple(rows),
                 numeric=(False, False, False, True, True, *((True,) if judged else ())))


def synthesis_tables(s: Mapping[str, Any] | None, *, cases: bool = True) -> tuple[Table, ...]:
    """The tables of a ``synthesis`` field (none when it is None); ``cases=False`` leaves
    out the per-query answers (the terminal points to the JSON for them)."""
    if not s:
        return ()
    tables = (synthesis_summary(s), synthesis_means(s))
    return (*tables, synthesis_cases(s)) if cases else tables
