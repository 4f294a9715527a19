"""trec_eval's ``-m`` selection, ``-M``/``-J`` and ``relstring``, over rankproof's measures.

`rankproof trec_eval` is a drop-in for the binary, so it has to read ``-m``
exactly as trec_eval does (``mark_measure``: the name is everything before
the first ``.``, the rest is its parameter list; nicknames mark several
measures; the first ``-m`` that gives a measure parameters wins) and print
each value under trec_eval's own name (``P_5``, ``iprec_at_recall_0.10``,
``utility_2,-1,0,0``). `select_trec_eval` does that, and maps every printed
column to a rankproof `Measure` by *parsing* trec_eval's spelling of it, so
whatever the measures registry can parse is computed, and whatever it cannot
is reported in `TrecSelection.missing` — never dropped. The preference
measures (``-R prefs``) carry no measure (`prefs_values` computes them); the
judgment-group ones (``P_avgjg_5``) carry their base measure (``P@5``), which
`jg_values` averages over groups.

`trec_eval_run` applies ``-M`` (keep the first N documents of each topic in
trec_eval's rank order) and ``-J`` (then drop documents without a judgment of
0 or more); `relstrings` computes the one string-valued measure.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankproof._errors import InputError
from rankproof.data import (
    Order,
    Qrels,
    Run,
    arrow_indices,
    ranked_order,
    to_numpy,
    to_numpy_filled,
)
from rankproof.measures._measure import Measure, parse
from rankproof.measures._names import (
    STRING_MEASURES,
    TREC_EVAL_MEASURES,
    TREC_EVAL_NICKNAMES,
    TrecStyle,
    trec_eval_base,
    trec_eval_measure,
    trec_implemented,
)
from rankproof.measures._prefs import JG_MEASURES, PREFS_MEASURES


@dataclass(frozen=True)
class TrecColumn:
    """One value trec_eval prints per topic (and/or in the ``all`` summary)."""

    name: str
    """The printed name (``P_5``)."""
    family: str
    """trec_eval's measure (``P``)."""
    style: TrecStyle
    measure: Measure | None
    """The rankproof measure computing it (None: a header line, relstring, or missing)."""
    per_topic: bool
    summary: bool
    length: int = 0
    """relstring's length."""


@dataclass(frozen=True)
class TrecSelection:
    """What trec_eval would print for some ``-m`` options, in its print order.

    ``missing`` names the printed columns rankproof cannot compute yet (and the
    trec_eval measures they belong to); ``rel_formats`` the ``-R`` formats the
    selected measures read.
    """

    columns: tuple[TrecColumn, ...]
    missing: tuple[str, ...]
    rel_formats: frozenset[str]

    @property
    def measures(self) -> tuple[Measure, ...]:
        """The distinct rankproof measures to evaluate, in print order."""
        out: list[Measure] = []
        for c in self.columns:
            if c.measure is not None and c.measure not in out:
                out.append(c.measure)
        return tuple(out)

    @property
    def missing_families(self) -> tuple[str, ...]:
        """trec_eval measures with at least one column rankproof cannot compute."""
        return tuple(dict.fromkeys(
            c.family for c in self.columns if c.name in self.missing))


class TrecMeasureError(InputError):
    """A ``-m`` trec_eval refuses: ``kind`` is ``"illegal"`` (an unknown name, trec_eval
    exit 1) or ``"init"`` (bad parameters: "Cannot initialize measure", exit 2)."""

    def __init__(self, message: str, *, kind: str, measure: str) -> None:
        super().__init__(message, field="measure")
        self.kind = kind
        self.measure = measure


_LONG = re.compile(r"^\s*[-+]?[0-9]*")
_FLOAT = re.compile(r"^\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text`` (``23.4`` → 23, ``x`` → 0)."""
    m = _LONG.match(text)
    digits = m.group(0).strip() if m else ""
    try:
        return int(digits)
    except ValueError:
        return 0


def _atof(text: str) -> float:
    """C's ``atof``: the leading number of ``text`` (``.25`` → 0.25, ``x`` → 0.0)."""
    m = _FLOAT.match(text)
    return float(m.group(0)) if m else 0.0


def _parse_one(candidates: Sequence[str]) -> Measure | None:
    for spelling in candidates:
        try:
            return parse(spelling)
        except ValueError:
            continue
    return None


def _cut_values(name: str, params: str | None, default: tuple[float, ...],
                fractions: bool) -> list[float]:
    if params is None:
        return list(default)
    values = sorted((_atof(p) if fractions else float(_atol(p))) for p in params.split(","))
    if not fractions and values[0] <= 0:
        raise TrecMeasureError(f"trec_eval: Negative cutoff detected (in {name}.{params})",
                               kind="init", measure=name)
    if any(a == b for a, b in itertools.pairwise(values)):
        raise TrecMeasureError(f"trec_eval: duplicate cutoffs detected (in {name}.{params})",
                               kind="init", measure=name)
    return values


def _columns(name: str, params: str | None) -> list[TrecColumn]:
    row = trec_eval_measure(name)
    assert row is not None
    style = row.style

    def col(printed: str, candidates: Sequence[str] = (), length: int = 0) -> TrecColumn:
        measure = _parse_one(candidates) if candidates else None
        return TrecColumn(printed, name, style, measure, row.per_topic, row.summary, length)

    if style == "header":
        return [col(name)]
    if style in ("count", "float"):
        return [col(name, [name])]
    if style == "cutoffs":
        values = _cut_values(name, params, row.defaults, fractions=False)
        return [col(f"{name}_{int(k)}", [f"{name}.{int(k)}", f"{name}_{int(k)}"])
                for k in values]
    if style == "fractions":
        values = _cut_values(name, params, row.defaults, fractions=True)
        return [col(f"{name}_{v:3.2f}", [f"{name}_{v:3.2f}", f"{name}.{v!r}"]) for v in values]
    if style == "string":
        length = int(row.defaults[0]) if params is None else int(_atof(params))
        return [col(name if params is None else f"{name}_{params}", length=max(length, 0))]
    # params / pairs: one value, named with the parameters as typed.
    if params is None:
        return [col(name, [name])]
    return [col(f"{name}_{params}", [f"{name}.{params}", f"{name}_{params}"])]


def select_trec_eval(specs: Sequence[str]) -> TrecSelection:
    """The columns trec_eval prints for ``-m`` options ``specs`` (``official`` when empty).

    Raises `TrecMeasureError` where trec_eval would stop: an unknown name
    (``illegal``), an empty parameter list or bad cutoffs (``init``). A
    trec_eval measure rankproof cannot compute is not an error here: its
    columns carry no measure and are listed in ``missing``; the caller decides.
    """
    marked: set[str] = set()
    params: dict[str, str] = {}
    for spec in specs or ["official"]:
        name, dot, given = spec.partition(".")
        if dot:
            if not given:
                raise TrecMeasureError(f"trec_eval: improper measure in parameter '{name}'",
                                       kind="illegal", measure=spec)
            params.setdefault(name, given)  # trec_eval uses the first -m that names it
        if name in TREC_EVAL_NICKNAMES:
            marked.update(TREC_EVAL_NICKNAMES[name])
        elif trec_eval_measure(name) is not None:
            marked.add(name)
        else:
            raise TrecMeasureError(f"trec_eval: illegal measure '{spec}'", kind="illegal",
                                   measure=spec)
    columns: list[TrecColumn] = []
    missing: list[str] = []
    formats: set[str] = set()
    for row in TREC_EVAL_MEASURES:
        if row.name not in marked:
            continue
        formats.add(row.rel_format)
        if row.name in PREFS_MEASURES:  # computed by `prefs_values` from -R prefs judgments
            columns.extend(_columns(row.name, None))
            continue
        if row.name in JG_MEASURES:
            cols = _jg_columns(row.name, params.get(row.name))
            implemented = True
        else:
            cols = _columns(row.name, params.get(row.name))
            implemented = trec_implemented(row.name)
        for c in cols:
            if c.style == "header":
                continue
            if c.style == "string":
                continue  # relstring: computed by `relstrings`
            if c.measure is None:
                if implemented and row.name in params:  # the family exists: its parameters are bad
                    _explain_bad_params(row.name, params[row.name])
                missing.append(c.name)
        columns.extend(cols)
    return TrecSelection(tuple(columns), tuple(missing), frozenset(formats))


def _jg_columns(name: str, params: str | None) -> list[TrecColumn]:
    """A judgment-group measure's columns: its base measure's (``P_5``), renamed
    (``P_avgjg_5``); each carries the base measure, which `jg_values` averages."""
    base = JG_MEASURES[name]
    row = trec_eval_measure(name)
    assert row is not None
    return [dataclasses.replace(c, name=name + c.name[len(base):], family=name,
                                per_topic=row.per_topic, summary=row.summary)
            for c in _columns(base, params)]


def rel_format_of(column: TrecColumn) -> str:
    """The ``-R`` judgments a column's measure reads: ``qrels``, ``prefs`` (``-R prefs`` or
    ``qrels_prefs``) or ``qrels_jg``; ``runid`` and ``num_q`` read any."""
    row = trec_eval_measure(column.family)
    return "any" if row is None or column.style == "header" else row.rel_format


def _explain_bad_params(name: str, given: str) -> None:
    try:
        parse(f"{name}.{given}")
    except ValueError as exc:
        raise TrecMeasureError(f"trec_eval: Cannot initialize measure '{name}': {exc}",
                               kind="init", measure=name) from None


def trec_eval_run(run: Run, qrels: Qrels, *, max_retrieved: int | None = None,
                  judged_only: bool = False, order: Order = "score") -> Run | None:
    """The run trec_eval evaluates under ``-M max_retrieved`` and ``-J``; None when empty.

    ``-M``: only the first ``max_retrieved`` documents of each topic, in the ranking
    ``order`` gives (trec_eval's: score descending, ties by docid descending; or the run's
    rank column). ``-J``: then only documents judged 0 or more for the topic (unjudged
    and unpooled ones removed, ranks closing up). Neither changes the topic set: a topic
    whose documents are all removed is evaluated with none retrieved.

    Under ``order="rank"`` the rank column is checked as the run gave it, and the kept
    rows' ranks are numbered again from 1 in that order: the order is the run's, and the
    ranks stay distinct and contiguous once ``-J`` has removed documents.
    """
    if max_retrieved is None and not judged_only:
        return run
    ranking = ranked_order(run, order)
    rows = ranking.row_ids(len(run))
    if max_retrieved is not None:
        rows = rows[ranking.positions < max(max_retrieved, 0)]
    if judged_only and len(rows):
        rows = rows[_judged_mask(run, qrels, rows)]
    if not len(rows):
        return None
    take = arrow_indices(rows)
    ranks = None if run.ranks is None else run.ranks[rows]
    if order == "rank" and ranks is not None:
        codes = run.qid_codes[rows]  # rows are in ranked order, grouped by topic
        starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
        lengths = np.diff(np.concatenate((starts, [len(rows)])))
        ranks = (np.arange(len(rows)) - np.repeat(starts, lengths) + 1).astype(ranks.dtype)
    return Run.from_columns(
        run.qid_vocab.take(pa.array(run.qid_codes[rows])), run.docids.take(take),
        run.scores[rows], ranks, name=run.name, tag=run.tag, source=run.source)


def _judged_mask(run: Run, qrels: Qrels, rows: np.ndarray) -> np.ndarray:
    judged = qrels.rels >= 0
    encoded = pc.dictionary_encode(qrels.docids)
    vocab = encoded.dictionary
    width = max(len(vocab), 1)
    qkeys = np.unique(qrels.qid_codes[judged].astype(np.int64) * width
                      + to_numpy(encoded.indices).astype(np.int64)[judged])
    tmap = to_numpy_filled(pc.index_in(run.qid_vocab, value_set=qrels.qid_vocab), -1)
    topic = tmap.astype(np.int64)[run.qid_codes[rows]]
    docs = to_numpy_filled(pc.index_in(run.docids.take(arrow_indices(rows)), value_set=vocab),
                           -1).astype(np.int64)
    keys = topic * width + docs
    return np.asarray((topic >= 0) & (docs >= 0) & np.isin(keys, qkeys), dtype=bool)


def relstring_length(spec: str) -> int | None:
    """The length of trec_eval's ``relstring`` a ``-m`` spelling asks for, or None.

    ``relstring`` → 10 (trec_eval's default), ``relstring.20`` and the printed
    ``relstring_20`` → 20; any other spelling → None. A trec_eval set never
    counts here (``all_trec`` marks relstring at its default length: see
    `relstring_request`). A length that is not a whole number 0 or above is an
    `InputError`.
    """
    text = spec.strip()
    if trec_eval_base(text) not in STRING_MEASURES:
        return None
    row = trec_eval_measure("relstring")
    assert row is not None
    if text == "relstring":
        return int(row.defaults[0])
    given = text[len("relstring") + 1:]
    if not given.isdigit():
        raise InputError(f"{spec!r}: relstring's length must be a whole number, got "
                         f"{given!r}", field="measure")
    return int(given)


def relstring_request(specs: Sequence[str]) -> tuple[str, int] | None:
    """The one relstring trec_eval prints for ``-m`` options ``specs``: (its printed
    name, its length), or None when no option asks for it.

    As trec_eval: relstring is one measure, marked by its name or by a set that
    holds it (``all_trec``); its length is that of the first option that gives
    one (``relstring.20``, printed ``relstring_20``), else 10 (printed
    ``relstring``).
    """
    asked = False
    for spec in specs:
        text = spec.strip()
        length = relstring_length(text)
        if length is not None and text != "relstring":
            return f"relstring_{text[len('relstring') + 1:]}", length
        asked = asked or length is not None or "relstring" in TREC_EVAL_NICKNAMES.get(text, ())
    return ("relstring", relstring_length("relstring") or 0) if asked else None


def relstrings(run: Run | None, qrels: Qrels, length: int) -> Mapping[str, str]:
    """trec_eval's ``relstring``: the labels of each topic's first ``length`` documents.

    One character per document: the label when 0–9, ``>`` above 9, ``.`` for
    a pooled but unjudged document (negative label), ``-`` for one not in the
    qrels. Only qrels topics; a topic the run lacks gets ``''``. The inputs
    are tiny (``length`` documents per topic), so this loops per topic.
    """
    labels: dict[tuple[str, str], int] = {}
    for qid, docs in qrels.to_dict().items():
        for doc, label in docs.items():
            labels[(qid, doc)] = label
    out = {q: "" for q in qrels.topics}
    if run is None or length <= 0:
        return out
    ranking = ranked_order(run)
    rows = ranking.row_ids(len(run))
    keep = ranking.positions < length
    qids = run.qid_vocab.to_pylist()
    kept = rows[keep]
    docids = run.docids.take(arrow_indices(kept)).to_pylist()
    chars: dict[str, list[str]] = {}
    for row, doc in zip(kept.tolist(), docids, strict=True):
        qid = qids[int(run.qid_codes[row])]
        if qid not in out:
            continue
        rel = labels.get((qid, doc))
        chars.setdefault(qid, []).append(
            "-" if rel is None else "." if rel < 0 else ">" if rel > 9 else str(rel))
    for qid, cs in chars.items():
        out[qid] = "".join(cs)
    return out
