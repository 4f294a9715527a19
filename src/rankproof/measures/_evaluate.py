"""`evaluate`: a run and qrels in, a `PerQuery` out — vectorised end to end.

Steps, none of which loops over topics in Python:

1. map run query ids onto qrels topics (integer codes);
2. rank the run as trec_eval does (usually a linear check, no sort);
3. join: find the run rows whose docid the qrels judge for that topic — a
   hash probe of every run docid against the (small) set of judged docids,
   then an integer search among the few hits;
4. hand the judged rows, sorted by (topic, rank), to one kernel per measure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, get_args

import numpy as np
import numpy.typing as npt
import pyarrow.compute as pc

from rankproof._errors import InputError
from rankproof._limits import shown as shown_value
from rankproof.data import (
    Order,
    Qrels,
    Run,
    arrow_indices,
    as_qrels,
    as_run,
    match_pairs,
    rank_column_problems,
    ranked_order,
    string_index,
    to_numpy,
)
from rankproof.measures._kernels import Judged
from rankproof.measures._kernels_trec import ALL_KERNELS
from rankproof.measures._measure import Measure, parse_many
from rankproof.measures._names import split_measure_text
from rankproof.measures._perquery import PerQuery, TopicPolicy

DEFAULT_MEASURES: tuple[str, ...] = ("nDCG@10", "RR@10", "AP", "R@100", "P@10")


def resolve_measures(
    measures: Iterable[str | Measure] | str | Measure | None,
) -> tuple[Measure, ...]:
    """Parse measure spellings into unique Measures, keeping the given order.

    A string may hold several measures (``"nDCG@10,RR@10"``, ``"AP R@100"``:
    `split_measure_text`, the one list grammar every command and file uses).
    Each spelling goes through `parse_many`, so trec_eval lists (``P.5,10``),
    bare cutoff families (``P``) and named sets (``official``, ``all_trec``)
    expand to their members; a measure named twice (directly or through a
    set) is kept once, at its first position. None means `DEFAULT_MEASURES`.
    """
    if measures is None:
        measures = DEFAULT_MEASURES
    if isinstance(measures, str | Measure):
        measures = [measures]
    out: list[Measure] = []
    for spec in measures:
        tokens = [spec] if isinstance(spec, Measure) else split_measure_text(spec, _parses)
        for token in tokens:
            for m in parse_many(token):
                if m not in out:
                    out.append(m)
    if not out:
        raise InputError("no measures given")
    return tuple(out)


def _parses(text: str) -> bool:
    try:
        parse_many(text)
    except ValueError:
        return False
    return True


def _join_by_arrow(
    run: Run, qrels: Qrels, tmap: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The judged run rows, their qrels topics and qrels rows, through Arrow's hash
    kernels: the exact path `match_pairs` defers to when fingerprints collide.

    A membership bitmap over the run's docids, then codes for the few hits only: no
    index array the size of the run.
    """
    encoded = pc.dictionary_encode(qrels.docids)
    vocab = encoded.dictionary
    doc_codes = to_numpy(encoded.indices).astype(np.int64)
    qkeys = qrels.qid_codes.astype(np.int64) * len(vocab) + doc_codes
    order = np.argsort(qkeys, kind="stable")
    qkeys = qkeys[order]
    hit_rows = np.flatnonzero(to_numpy(pc.is_in(run.docids, value_set=vocab)))
    hit_docs = to_numpy(
        pc.index_in(run.docids.take(arrow_indices(hit_rows)), value_set=vocab)
    ).astype(np.int64)
    hit_topic = tmap[run.qid_codes[hit_rows]]
    valid = hit_topic >= 0
    hit_rows, hit_docs, hit_topic = hit_rows[valid], hit_docs[valid], hit_topic[valid]
    keys = hit_topic * len(vocab) + hit_docs
    at = np.searchsorted(qkeys, keys)
    at_clipped = np.minimum(at, len(qkeys) - 1)
    matched = (at < len(qkeys)) & (qkeys[at_clipped] == keys)
    return (hit_rows[matched], hit_topic[matched],
            order[at_clipped[matched]].astype(np.int64))


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, int]] | Any,
    run: Run | Mapping[str, Mapping[str, float]] | Any,
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    rel_level: int = 1,
    topics: TopicPolicy = "complete",
    order: Order = "score",
) -> PerQuery:
    """Evaluate ``run`` against ``qrels`` with trec_eval's semantics.

    ``topics="complete"`` (default, trec_eval ``-c``): every qrels topic counts,
    and a topic the run lacks scores 0. ``topics="intersection"`` mirrors
    trec_eval 9 without ``-c``: only topics in both. Run topics absent from the
    qrels are ignored either way; both lists are recorded in the result.

    With ``topics="complete"``, a run that shares **no** topic with the qrels
    is refused (`InputError` naming the run): that is what a file with its qid
    and docid columns swapped, or a run for another collection, looks like,
    and scoring it 0 everywhere would read as "a terrible system" instead of
    "the wrong file". ``topics="complete-allow-disjoint"`` is the explicit
    opt-out: ``complete``'s semantics, and such a run is accepted with every
    topic at 0 (writing ``"complete"`` explicitly is not an opt-out: it is the
    default). ``"intersection"`` evaluates no topic for such a run (an empty
    result, ``n == 0``), which no table can mistake for a score.

    A score column that looks like ranks (integer scores rising down the
    run's list, by its rank column or else its file order, in most topics)
    would be ranked upside down by score; it is evaluated as asked, and a
    warning is stamped into ``PerQuery.warnings`` (not with ``order="rank"``,
    which ignores the scores).

    ``rel_level`` is the minimum label counted as relevant (trec_eval ``-l``)
    for measures that do not set their own ``rel=``.

    Qrels come first, as in ranx and trec_eval. Besides `Qrels` and `Run`,
    plain ``{qid: {docid: label}}`` / ``{qid: {docid: score}}`` dicts and
    pandas DataFrames or Arrow tables are accepted (`rankproof.data.as_qrels`,
    `rankproof.data.as_run`); anything else is an `InputError`.
    """
    qrels = as_qrels(qrels)
    run = as_run(run)
    ms = resolve_measures(measures)
    check_options(topics, rel_level)

    n_qrels_topics = len(qrels.qid_vocab)
    # 1. run query id -> qrels topic index (-1: not judged).
    tmap = string_index(run.qid_vocab, qrels.qid_vocab)
    present = np.zeros(n_qrels_topics, dtype=bool)
    present[tmap[tmap >= 0]] = True
    # The few dropped and missing ids are picked by Arrow: no Python pass over every topic
    # (and no ``pa.array(ndarray)``, which imports pandas).
    dropped = tuple(run.qid_vocab.take(arrow_indices(np.flatnonzero(tmap < 0))).to_pylist())
    qrels_topics = qrels.qid_vocab.to_pylist()
    missing = tuple(qrels.qid_vocab.take(arrow_indices(np.flatnonzero(~present))).to_pylist())
    if len(run) and not present.any() and topics == "complete":
        raise _disjoint_error(run, qrels_topics)

    # 2. ranking.
    ranking = ranked_order(run, order)

    # 3. join run rows to judgments: by fingerprints (`match_pairs`, exact), or by
    # Arrow's hash kernels when two judged pairs' fingerprints collide.
    row_topic = tmap[run.qid_codes]
    pairs = match_pairs(row_topic, run.docids, qrels.qid_codes, qrels.docids)
    if pairs is None:
        j_rows, j_topic, j_qrels_row = _join_by_arrow(run, qrels, tmap)
    else:
        j_rows, j_qrels_row = pairs
        j_topic = row_topic[j_rows]
    j_rel = qrels.rels[j_qrels_row]
    j_pos = ranking.positions_at(ranking.slot_of_rows(j_rows))
    sort = np.lexsort((j_pos, j_topic))

    # Documents retrieved per run topic: each topic is one block of ranked
    # slots, so its block length (no pass over every row).
    block_rows = ranking.starts if ranking.rows is None else ranking.rows[ranking.starts]
    num_ret_all = np.zeros(len(run.qid_vocab), dtype=np.int64)
    num_ret_all[run.qid_codes[block_rows]] = np.diff(np.append(ranking.starts, ranking.n_slots))
    num_ret = np.zeros(n_qrels_topics, dtype=np.int64)
    judged_topics = tmap >= 0
    num_ret[tmap[judged_topics]] = num_ret_all[judged_topics]

    judged = Judged(
        n_topics=n_qrels_topics, num_ret=num_ret, topic=j_topic[sort], pos=j_pos[sort],
        rel=j_rel[sort], qrels_topic=qrels.qid_codes.astype(np.int64), qrels_rel=qrels.rels,
        default_level=int(rel_level), qrels_row=j_qrels_row[sort],
        qrels=qrels,
    )
    values = np.empty((n_qrels_topics, len(ms)), dtype=np.float64)
    for i, m in enumerate(ms):
        values[:, i] = ALL_KERNELS[m.family](judged, m)

    if topics == "intersection":
        keep = present
        qids = tuple(qrels.qid_vocab.take(arrow_indices(np.flatnonzero(present))).to_pylist())
        values = values[keep]
        zero_filled: tuple[str, ...] = ()
        not_evaluated = missing
    else:
        qids = tuple(qrels_topics)
        zero_filled = missing
        not_evaluated = ()
    notes = evaluation_notes(run.notes, ranking.n_ties, run.dedupe, run.n_dropped_duplicates,
                             qrels, (0, 0) if order == "rank" else rank_column_problems(run))
    warning = None if order == "rank" else rank_like_scores(run)
    return PerQuery(
        qids=qids, measures=ms, values=values, run_name=run.name, run_tag=run.tag,
        qrels_digest=None, rel_level=int(rel_level), topics=topics, order=order,
        zero_filled=zero_filled, dropped=dropped, not_evaluated=not_evaluated,
        notes=tuple(notes), warnings=() if warning is None else (warning,),
    )


def evaluation_notes(run_notes: tuple[str, ...], n_ties: int, dedupe: str | None,
                     n_dropped: int, qrels: Qrels,
                     rank_problems: tuple[int, int] = (0, 0)) -> list[str]:
    """How the values were made, as `PerQuery.notes` says it: the run's own notes, ties
    broken, rows deduplicated, a rank column that is no ranking (queries, rows:
    `rank_column_problems`; ignored in score order) (shared with `evaluate_partitions`,
    which sums the counts)."""
    notes = list(run_notes)
    if n_ties:
        notes.append(f"{n_ties} tied scores broken by docid (descending), as trec_eval")
    queries, rows = rank_problems
    if queries:
        notes.append(
            f"the rank column is not a ranking in {queries} quer"
            f"{'y' if queries == 1 else 'ies'} ({rows} row(s) with a repeated or missing "
            "rank): ignored, documents ranked by score as trec_eval does (--order rank "
            "refuses such a run)")
    if dedupe:
        notes.append(f"run deduplicated ({dedupe}): {n_dropped} rows dropped")
    if qrels.dedupe:
        notes.append(
            f"qrels deduplicated ({qrels.dedupe}): {qrels.n_dropped_duplicates} rows dropped"
        )
    return notes


def check_options(topics: object, rel_level: object) -> None:
    """Refuse an unknown topic policy or a non-integer ``rel_level`` (see `evaluate`)."""
    if topics not in get_args(TopicPolicy):
        raise InputError("topics must be 'complete' or 'intersection' (or "
                         f"'complete-allow-disjoint'), got {topics!r}")
    if isinstance(rel_level, bool) or not isinstance(rel_level, int | np.integer):
        raise InputError(f"rel_level must be an integer, got {rel_level!r}")


def _disjoint_error(run: Run, qrels_topics: list[str]) -> InputError:
    """The refusal of a run that shares no topic with the qrels (see `evaluate`)."""
    return disjoint_error(run.name, run.qid_vocab.to_pylist(), run.source, qrels_topics)


def disjoint_error(name: str, run_topics: list[str], source: str | None,
                   qrels_topics: list[str]) -> InputError:
    """`_disjoint_error` from the run's name, topics and source (a streamed run is never
    whole in memory: `evaluate_partitions`)."""
    return InputError(
        f"the run {shown_value(name)} shares no topic with the qrels: none of its "
        f"{len(run_topics)} topic(s) ({_examples(run_topics)}) is one of the qrels' "
        f"{len(qrels_topics)} ({_examples(qrels_topics)}); are its qid and docid columns "
        "swapped, or is it a run for other queries? To score every qrels topic 0 anyway, "
        "pass topics='complete-allow-disjoint' (--topics complete-allow-disjoint)",
        path=source, field="qid")


def _examples(values: list[str], n: int = 3) -> str:
    shown = ", ".join(shown_value(v) for v in values[:n])
    return shown + (", …" if len(values) > n else "")


RANK_LIKE_SHARE = 0.5
"""Share of a run's topics whose integer scores rise down the list above which the
score column is taken for ranks (`rank_like_scores`)."""


def rank_like_scores(run: Run) -> str | None:
    """The warning for a score column that looks like ranks, or None.

    Why: trec_eval ranks by score, highest first; a tool that writes ranks
    (1, 2, 3 …) into the score column gets its list evaluated upside down,
    and nothing fails: the numbers are merely low. The signature is every
    score an integer, and within more than `RANK_LIKE_SHARE` of the topics
    whose scores vary, the scores never fall and do rise down the run's own
    list. "Down the list" is read from neighbouring rows of the same topic:
    the step from one row to the next counts as going down when the rank
    column increases (or, without a rank column or where it ties, in file
    order, which is how runs are written). No sort: real-valued scores cost
    one comparison pass, falling integer scores (``-rank``) a few more.
    """
    return rank_like_warning(*_rank_like_tally(run, exact=False))


def rank_like_counts(run: Run) -> tuple[bool, int, int]:
    """The tallies behind `rank_like_scores`: (every score an integer, topics whose
    scores only rise down the list, topics whose scores vary).

    They add up over runs holding disjoint sets of whole topics, so a run read in
    partitions (`evaluate_partitions`) gets the warning the whole run would get
    (`rank_like_warning` of the sums, the ``and`` of the first).
    """
    return _rank_like_tally(run, exact=True)


def rank_like_warning(all_integer: bool, n_rising: int, n_varied: int) -> str | None:
    """The warning `rank_like_scores` gives for these tallies, or None."""
    if not all_integer or not n_varied or n_rising <= RANK_LIKE_SHARE * n_varied:
        return None
    return (f"the score column looks like ranks: every score is an integer and they rise "
            f"down the list in {n_rising} of {n_varied} topics, so ranking by score "
            "(highest first, as trec_eval) puts the run's first document last; if the "
            "column holds ranks, write score = -rank, or rank by the rank column "
            "(order='rank', --order rank)")


def _rank_like_tally(run: Run, *, exact: bool) -> tuple[bool, int, int]:
    """`rank_like_counts`; with ``exact=False`` a run with no rising step stops early
    at (True, 0, 0), which gives no warning either."""
    scores = run.scores
    if not bool(np.all(scores == np.floor(scores))):
        return False, 0, 0
    if len(scores) < 2:
        return True, 0, 0
    codes = run.qid_codes
    same = codes[1:] == codes[:-1]
    diff = np.diff(scores)
    up, down = diff > 0, diff < 0
    if run.ranks is not None:  # a step up the rank column swaps what rising means
        back = np.diff(run.ranks) < 0
        up, down = (up & ~back) | (down & back), (down & ~back) | (up & back)
    up &= same
    if not exact and not up.any():  # the usual case for integer scores: -rank, or falling
        return True, 0, 0
    down &= same
    n_topics = len(run.qid_vocab)
    topic = codes[1:]
    rises = np.bincount(topic[up], minlength=n_topics)
    falls = np.bincount(topic[down], minlength=n_topics)
    varied = (rises + falls) > 0
    rising = varied & (falls == 0)
    return True, int(rising.sum()), int(varied.sum())
