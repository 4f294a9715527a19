"""trec_eval's text output, reproduced byte for byte.

Each line is ``name<TAB>topic<TAB>value`` with the name left-justified to 22
characters, counts printed as integers and everything else with ``%.4f``;
per-topic lines come first (topics in byte order), then the ``all`` lines.
Measures are printed in trec_eval's own table order, whatever order they were
asked for in, so that the output can be diffed against trec_eval's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rankproof._errors import InputError
from rankproof.data import Input
from rankproof.measures import (
    TREC_PRINT_ORDER,
    Measure,
    PerQuery,
    TrecColumn,
    TrecSelection,
)


def trec_sort(measures: tuple[Measure, ...]) -> list[Measure]:
    """trec_eval's print order; measures trec_eval lacks follow in the order given."""

    def key(item: tuple[int, Measure]) -> tuple[int, float, int]:
        i, m = item
        fam = m.trec_family
        if fam is None or fam not in TREC_PRINT_ORDER:
            return (len(TREC_PRINT_ORDER), i, 0)
        return (TREC_PRINT_ORDER.index(fam), m.trec_sort_value, i)

    return [m for _, m in sorted(enumerate(measures), key=key)]


def _name(m: Measure) -> str:
    return m.trec_name or str(m)


def _value(m: Measure, value: float) -> str:
    if m.definition.integer:
        return str(round(value))
    return f"{value:.4f}"


def trec_lines(
    pq: PerQuery, *, per_query: bool = False, header: bool = False, summary: bool = True,
    relstring: tuple[str, Mapping[str, str]] | None = None,
) -> Iterator[str]:
    """The lines trec_eval would print for ``pq`` (without trailing newlines).

    ``header`` adds the ``runid`` and ``num_q`` lines, which trec_eval prints
    for its ``official`` and ``all_trec`` sets; ``summary=False`` leaves out
    every ``all`` line (trec_eval ``-n``). ``relstring`` is trec_eval's
    string measure, ``(printed name, {qid: string})``: with ``per_query`` each
    topic's line comes at trec_eval's place for it (after ``P``); trec_eval
    prints no ``all`` line for it.
    """
    ordered = trec_sort(pq.measures)
    at = TREC_PRINT_ORDER.index("relstring")
    split = sum(1 for m in ordered
                if m.trec_family in TREC_PRINT_ORDER
                and TREC_PRINT_ORDER.index(str(m.trec_family)) < at)
    if per_query:
        for row, qid in enumerate(pq.qids):
            slots: list[Measure | None] = [*ordered, None]
            for i, m in enumerate(slots):
                if i == split and relstring is not None:
                    yield f"{relstring[0]:<22}\t{qid}\t'{relstring[1].get(qid, '')}'"
                if m is None:
                    continue
                if not m.definition.trec_per_topic:
                    continue  # gm_map, gm_bpref: trec_eval prints the "all" line only
                yield f"{_name(m):<22}\t{qid}\t{_value(m, pq.values[row, pq.measures.index(m)])}"
    if not summary:
        return
    if header:
        yield f"{'runid':<22}\tall\t{pq.run_tag or pq.run_name}"
        yield f"{'num_q':<22}\tall\t{pq.n}"
    for m in ordered:
        yield f"{_name(m):<22}\tall\t{_value(m, pq.aggregate(m))}"


# -- rankproof trec_eval: the drop-in's output ----------------------------------

MISSING_ZSCORE = -1000000.0
"""What trec_eval prints (as a Z score) for a topic or measure its -Z file lacks."""
_GEO_FLOOR = 0.00001  # trec_eval's MIN_GEO_MEAN


@dataclass(frozen=True)
class ZScores:
    """trec_eval's ``-Z`` file: ``qid measure mean stddev`` per line."""

    table: Mapping[tuple[str, str], tuple[float, float]]
    topics: frozenset[str]

    def convert(self, qid: str, name: str, value: float) -> float:
        """trec_eval's ``te_convert_to_zscore`` for one value."""
        if qid not in self.topics:
            return MISSING_ZSCORE
        entry = self.table.get((qid, name))
        if entry is None:
            return MISSING_ZSCORE
        mean, sd = entry
        if sd:
            return (value - mean) / sd
        return 0.0 if value == mean else MISSING_ZSCORE


def read_zscores(path: str | Path) -> ZScores:
    """Read a ``-Z`` file; `InputError` naming the line for anything but 4 fields."""
    src = Input.open(path, what="z-scores file")
    table: dict[tuple[str, str], tuple[float, float]] = {}
    for n, line in enumerate(src.lines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(f"expected 'qid measure mean stddev', found {len(fields)} "
                             "field(s)", path=src.label, line=n)
        try:
            table[(fields[0], fields[1])] = (float(fields[2]), float(fields[3]))
        except ValueError:
            raise InputError("mean and stddev must be numbers", path=src.label,
                             line=n) from None
    return ZScores(table, frozenset(q for q, _ in table))


def _summarise(col: TrecColumn, values: np.ndarray) -> float:
    how = getattr(col.measure.definition, "aggregate", "mean") if col.measure else "mean"
    if col.style == "count" or how == "sum":
        return float(values.sum())
    if not len(values):
        return math.nan
    if how == "geometric":
        return float(np.exp(np.log(np.maximum(values, _GEO_FLOOR)).mean()))
    return float(values.mean())


def trec_eval_lines(
    pq: PerQuery,
    selection: TrecSelection,
    *,
    per_query: bool = False,
    summary: bool = True,
    relstrings: Mapping[str, str] | None = None,
    zscores: ZScores | None = None,
    summary_values: Mapping[str, float] | None = None,
) -> Iterator[str]:
    """The lines trec_eval 10 prints for ``pq`` (without newlines), byte for byte.

    Per-topic lines (``-q``) come topic by topic in byte order, each topic's
    measures in trec_eval's table order; then, unless ``summary`` is off
    (``-n``), the ``all`` lines: ``runid``, ``num_q`` and every measure's
    summary (a sum for counts, a geometric mean for ``gm_*``, else the mean).
    With ``zscores`` (``-Z``) every number is first turned into a Z score
    and printed ``%6.4f`` under ``Z`` + its name. Every column must carry a
    measure (or be a header or relstring): missing ones are the caller's to
    refuse, not this function's to skip. ``summary_values`` replaces the
    ``all`` value of the columns it names (trec_eval's ``-c`` ``num_rel``
    comes from the whole qrels, not from the topics' values). A NaN prints
    as ``-nan``, as glibc's ``printf`` prints trec_eval's ``0.0 / 0.0``.
    """
    missing = [c.name for c in selection.columns
               if c.measure is None and c.style not in ("header", "string")]
    if missing:
        raise InputError(f"cannot print {', '.join(missing)}: not computed")
    index = {m: j for j, m in enumerate(pq.measures)}
    order = sorted(range(pq.n), key=lambda i: pq.qids[i].encode())
    numbers: dict[str, np.ndarray] = {}
    for c in selection.columns:
        if c.measure is None:
            continue
        col = np.asarray(pq.values[:, index[c.measure]], dtype=np.float64)
        if zscores is not None:
            col = np.array([zscores.convert(q, c.name, float(v))
                            for q, v in zip(pq.qids, col.tolist(), strict=True)])
        numbers[c.name] = col

    def show(c: TrecColumn, qid: str, value: float) -> str:
        text = f"{'-nan':>6}" if math.isnan(value) else f"{value:6.4f}"
        if zscores is not None:
            return f"Z{c.name:<22}\t{qid}\t{text}"
        if c.style == "count":
            return f"{c.name:<22}\t{qid}\t{int(value)}"
        return f"{c.name:<22}\t{qid}\t{text}"

    if per_query:
        for i in order:
            qid = pq.qids[i]
            for c in selection.columns:
                if not c.per_topic or c.style == "header":
                    continue
                if c.style == "string":
                    text = (relstrings or {}).get(qid, "")
                    yield f"{c.name:<22}\t{qid}\t'{text}'"
                    continue
                yield show(c, qid, float(numbers[c.name][i]))
    if not summary:
        return
    for c in selection.columns:
        if not c.summary:
            continue
        if c.name == "runid":
            yield f"{'runid':<22}\tall\t{pq.run_tag or pq.run_name}"
        elif c.name == "num_q":
            yield (f"Z{'num_q':<22}\tall\t{float(pq.n):6.4f}" if zscores is not None
                   else f"{'num_q':<22}\tall\t{pq.n}")
        elif summary_values is not None and c.name in summary_values:
            yield show(c, "all", summary_values[c.name])
        elif c.measure is not None:
            yield show(c, "all", _summarise(c, numbers[c.name]))
