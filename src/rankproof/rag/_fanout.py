"""A judge's calls made concurrently on an engine (`Judge.judge` with an ``executor``).

Only the first case with a given cache key is called on the engine; `Judge.judge` then
judges the later ones with the same key itself, after it, from the cache, as one call
after another would, so the verdicts and the call count do not depend on the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankproof.engine import Executor
    from rankproof.rag._answers import AnswerRow, Context
    from rankproof.rag._judge import Judge, Verdict

    Item = tuple[str, str, str, tuple[Context, ...], int]
    """``(query_id, query, answer, contexts, repeat)``: one call of `Judge.judge`."""


def judge_all(judge: Judge, rows: Iterable[AnswerRow], repeat: int,
              queries: Mapping[str, str] | None, executor: Executor | None
              ) -> tuple[tuple[Verdict, ...], int]:
    """Every row's ``repeat`` verdicts, in order, and how many real calls were made; the
    query is ``row.query``, else ``queries[row.query_id]``, else empty."""
    items = [(row.query_id, row.query or (queries or {}).get(row.query_id) or "",
              row.answer, tuple(row.contexts), r) for row in rows for r in range(repeat)]
    done = {} if executor is None else judge_leads(judge, items, executor)
    verdicts: list[Verdict] = []
    calls = 0
    for i, (query_id, query, answer, contexts, r) in enumerate(items):
        verdict, called = done[i] if i in done else judge.judge_one(
            query_id, query, answer, contexts, repeat=r)
        verdicts.append(verdict)
        calls += called
    return tuple(verdicts), calls


def judge_leads(judge: Judge, items: Sequence[Item], executor: Executor
                ) -> dict[int, tuple[Verdict, bool]]:
    """``{index: (verdict, called)}`` of the first item of each cache key, judged on
    ``executor`` (``kind="io"``: the calls wait on the judge's server)."""
    first: dict[str, int] = {}
    for i, (_, query, answer, contexts, repeat) in enumerate(items):
        first.setdefault(judge.cache_key(query, answer, contexts, repeat), i)
    lead = sorted(first.values())
    done = executor.map(_judge_item, [(judge, *items[i]) for i in lead], kind="io")
    return dict(zip(lead, done, strict=True))


def _judge_item(item: tuple[Judge, str, str, str, tuple[Context, ...], int]
                ) -> tuple[Verdict, bool]:
    """One call (an engine task: module-level, so workers import it)."""
    judge, query_id, query, answer, contexts, repeat = item
    return judge.judge_one(query_id, query, answer, contexts, repeat=repeat)
