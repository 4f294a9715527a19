"""trec_eval's text output, reproduced byte for byte.

Each line is ``name<TAB>topic<TAB>value`` with the name left-justified to 22
characters, counts printed as integers and everything else with ``%.4f``;
per-topic lines come first (topics in byte order), then the ``all`` lines.
Measures are printed in trec_eval's own table order, whatever order they were
asked for in, so that the output can be diffed against trec_eval's.
"""

from __future__ import annotations

from collections.abc import Iterator

from rankproof.measures import TREC_PRINT_ORDER, Measure, PerQuery


def trec_sort(measures: tuple[Measure, ...]) -> list[Measure]:
    """trec_eval's print order; measures trec_eval lacks follow in the order given."""

    def key(item: tuple[int, Measure]) -> tuple[int, int, int]:
        i, m = item
        fam = m.trec_family
        if fam is None:
            return (len(TREC_PRINT_ORDER), i, 0)
        return (TREC_PRINT_ORDER.index(fam), m.cutoff or 0, i)

    return [m for _, m in sorted(enumerate(measures), key=key)]


def _name(m: Measure) -> str:
    return m.trec_name or str(m)


def _value(m: Measure, value: float) -> str:
    if m.definition.integer:
        return str(round(value))
    return f"{value:.4f}"


def trec_lines(
    pq: PerQuery, *, per_query: bool = False, header: bool = False
) -> Iterator[str]:
    """The lines trec_eval would print for ``pq`` (without trailing newlines).

    ``header`` adds the ``runid`` and ``num_q`` lines, which trec_eval prints
    for its ``official`` and ``all_trec`` sets.
    """
    ordered = trec_sort(pq.measures)
    if per_query:
        for row, qid in enumerate(pq.qids):
            for m in ordered:
                yield f"{_name(m):<22}\t{qid}\t{_value(m, pq.values[row, pq.measures.index(m)])}"
    if header:
        yield f"{'runid':<22}\tall\t{pq.run_tag or pq.run_name}"
        yield f"{'num_q':<22}\tall\t{pq.n}"
    for m in ordered:
        yield f"{_name(m):<22}\tall\t{_value(m, pq.aggregate(m))}"
