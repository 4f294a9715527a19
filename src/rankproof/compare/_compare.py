"""`compare`: several runs, several measures, one honest verdict per pair.

Every candidate is compared with the baseline on every measure by a paired
test over the same topics (the qrels' topics, so pairing by query id always
holds). All the p-values of one call form one family and are corrected
together (Holm by default), because a table with twelve cells gives twelve
chances of a false "better". A verdict is *better* or *worse* only when the
corrected p is at most ``alpha``; the direction follows the measure's
polarity. A non-significant difference that would need more queries than
there are is flagged *underpowered*: "no detectable difference" is not "no
difference".

The unjudged-hole caveat: measures score unjudged documents as non-relevant.
A run that retrieves many documents nobody judged (a new dense retriever
evaluated on BM25-pooled qrels) is then penalised for the pool, not for its
quality. When a compared run's Judged@k at the measure's cutoff is below 0.9,
or differs from the baseline's by more than 0.1, the row says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from rankproof._errors import PairingError
from rankproof.data._model import Qrels, Run
from rankproof.measures import Measure, PerQuery, evaluate, resolve_measures
from rankproof.measures._perquery import TopicPolicy
from rankproof.stats._correct import correct
from rankproof.stats._paired import PairedResult, TestName, paired_test
from rankproof.stats._results import Result
from rankproof.stats._tukey import TukeyHSDResult, tukey_hsd_randomized
from rankproof.stats._validate import check_choice, check_probability

Verdict = Literal["better", "worse", "no detectable difference"]
Pairs = Literal["baseline", "all"]
CORRECTIONS: tuple[str, ...] = ("holm", "bh", "bonferroni", "none")
JUDGED_FLOOR = 0.9
JUDGED_GAP = 0.1
JUDGED_DEFAULT_DEPTH = 100  # measures without a cutoff look deep: Judged@100 stands for them
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class ComparisonRow(Result):
    """One (system a vs system b, measure) cell: the paired result and its verdict.

    ``result`` compares ``candidate`` (a) with ``baseline`` (b): a positive
    ``result.difference`` means the candidate scored higher.
    """

    baseline: str
    candidate: str
    measure: str
    higher_is_better: bool
    result: PairedResult
    p_corrected: float
    verdict: Verdict
    underpowered: bool
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Comparison(Result):
    """The outcome of :func:`compare`: every row, how it was made, and the per-query data.

    ``per_query[system][measure]`` maps each qid to its score, so that every
    number in ``rows`` can be recomputed (and power analyses can start from
    the observed per-query differences).
    """

    systems: tuple[str, ...]
    baseline: str
    measures: tuple[str, ...]
    pairs: str
    test: str
    alpha: float
    correction: str
    resamples: int
    seed: int
    confidence_level: float
    rel_level: int
    topics: str
    n_topics: int
    rows: tuple[ComparisonRow, ...]
    judged: Mapping[str, Mapping[str, float]]
    per_query: Mapping[str, Mapping[str, Mapping[str, float]]]
    tukey: Mapping[str, TukeyHSDResult] = field(default_factory=dict)
    caveats: tuple[str, ...] = ()
    complete_judgments: bool = False
    schema_version: int = SCHEMA_VERSION

    def rows_for(self, measure: str | Measure) -> tuple[ComparisonRow, ...]:
        key = str(measure if isinstance(measure, Measure) else resolve_measures(measure)[0])
        return tuple(r for r in self.rows if r.measure == key)

    @property
    def regressions(self) -> tuple[ComparisonRow, ...]:
        """Rows whose verdict is *worse*."""
        return tuple(r for r in self.rows if r.verdict == "worse")

    def deltas(self, candidate: str, measure: str | Measure, baseline: str | None = None
               ) -> dict[str, float]:
        """Per-query ``candidate − baseline`` differences for one measure."""
        key = str(measure if isinstance(measure, Measure) else resolve_measures(measure)[0])
        base = self.per_query[baseline or self.baseline][key]
        cand = self.per_query[candidate][key]
        return {q: cand[q] - base[q] for q in base}

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["kind"] = "rankproof.comparison"
        return out


def _judged_measure(m: Measure) -> Measure:
    return Measure("Judged", cutoff=m.cutoff or JUDGED_DEFAULT_DEPTH)


def _verdict(row_p: float, alpha: float, difference: float, higher_is_better: bool) -> Verdict:
    if row_p <= alpha and difference != 0.0:
        return "better" if (difference > 0) == higher_is_better else "worse"
    return "no detectable difference"


def _name_runs(runs: Mapping[str, Run] | Sequence[Run]) -> dict[str, Run]:
    if isinstance(runs, Mapping):
        named = dict(runs)
    else:
        named = {}
        for run in runs:
            if run.name in named:
                raise ValueError(
                    f"two runs are named {run.name!r}; pass a mapping of unique names to runs"
                )
            named[run.name] = run
    if len(named) < 2:
        raise ValueError(f"compare needs at least two runs, got {len(named)}")
    return named


def compare(
    runs: Mapping[str, Run] | Sequence[Run],
    qrels: Qrels,
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    baseline: str | None = None,
    test: TestName = "randomization",
    alpha: float = 0.05,
    correction: str = "holm",
    pairs: Pairs = "baseline",
    resamples: int = 10_000,
    seed: int = 0,
    confidence_level: float = 0.95,
    rel_level: int = 1,
    topics: TopicPolicy = "complete",
    complete_judgments: bool = False,
) -> Comparison:
    """Compare runs on the same qrels; see the module docstring for the rules.

    ``runs`` is a mapping of names to runs, or a sequence of runs with unique
    names. ``baseline`` defaults to the first run. ``pairs="baseline"``
    compares each candidate with the baseline (corrected together by
    ``correction``: "holm", "bh", "bonferroni" or "none");
    ``pairs="all"`` compares every pair, with randomized Tukey HSD p-values
    (which already control the error rate over the pairs of one measure).
    ``complete_judgments=True`` declares that every document absent from the
    qrels is known to be non-relevant (quote-anchored judgments over a closed
    corpus are complete by construction), which turns off the unjudged-hole
    caveat; the choice is recorded in the result.
    """
    named = _name_runs(runs)
    ms = resolve_measures(measures)
    alpha = check_probability(alpha, "alpha")
    correction = check_choice(correction, "correction", CORRECTIONS)
    pairs = check_choice(pairs, "pairs", ("baseline", "all"))  # type: ignore[assignment]
    base = baseline if baseline is not None else next(iter(named))
    if base not in named:
        raise ValueError(f"baseline {base!r} is not one of the runs: {', '.join(named)}")

    judged_ms = tuple(dict.fromkeys(_judged_measure(m) for m in ms))
    results: dict[str, PerQuery] = {
        name: evaluate(qrels, run, (*ms, *judged_ms), rel_level=rel_level, topics=topics)
        for name, run in named.items()
    }
    qid_sets = {name: set(pq.qids) for name, pq in results.items()}
    base_q = qid_sets[base]
    for name, qs in qid_sets.items():
        if qs != base_q:
            raise PairingError(
                f"{name!r} and {base!r} cover different topics (topics={topics!r}); "
                "use topics='complete' to score missing topics 0",
                only_left=sorted(qs - base_q), only_right=sorted(base_q - qs),
            )
    n_topics = len(base_q)
    judged = {name: {str(j): pq.mean(j) for j in judged_ms} for name, pq in results.items()}

    if pairs == "baseline":
        pairings = [(base, c) for c in named if c != base]
    else:
        names = list(named)
        pairings = [(names[i], names[j]) for i in range(len(names))
                    for j in range(i + 1, len(names))]

    raw: list[tuple[str, str, Measure, PairedResult]] = []
    for m in ms:
        for b, c in pairings:
            r = paired_test(results[c], results[b], test, measure=m,
                            confidence_level=confidence_level, resamples=resamples, seed=seed)
            raw.append((b, c, m, r))

    tukey: dict[str, TukeyHSDResult] = {}
    if pairs == "all":
        for m in ms:
            tukey[str(m)] = tukey_hsd_randomized(
                dict(results), measure=m, resamples=resamples, seed=seed,
            )
        corrected = [tukey[str(m)].p_value(b, c) for b, c, m, _ in raw]
    else:
        corrected = correct([r.p_value for *_, r in raw], correction).tolist()  # type: ignore[arg-type]

    # Qrels that list only relevant documents (Cranfield-style) say nothing about which of
    # the other documents were looked at: Judged@k is then just precision, not coverage.
    positives_only = not bool((qrels.rels <= 0).any())
    check_holes = not complete_judgments and not positives_only
    rows: list[ComparisonRow] = []
    for (b, c, m, r), p_corr in zip(raw, corrected, strict=True):
        verdict = _verdict(p_corr, alpha, r.difference, m.higher_is_better)
        underpowered = (verdict == "no detectable difference" and r.queries_needed is not None
                        and r.queries_needed > r.n)
        rows.append(ComparisonRow(
            baseline=b, candidate=c, measure=str(m), higher_is_better=m.higher_is_better,
            result=r, p_corrected=float(p_corr), verdict=verdict, underpowered=underpowered,
            notes=_judged_notes(judged, b, c, _judged_measure(m)) if check_holes else (),
        ))

    caveats: list[str] = []
    if positives_only and not complete_judgments:
        caveats.append("the qrels list only relevant documents, so how many retrieved documents "
                       "were ever judged cannot be checked; unlisted documents count as "
                       "non-relevant")
    if pairs == "all" and len(ms) > 1:
        caveats.append(f"Tukey HSD controls the error rate within each measure; {len(ms)} measures "
                       "were tested, so read cross-measure patterns with care")
    for name, pq in results.items():
        if pq.zero_filled:
            caveats.append(f"{name}: {len(pq.zero_filled)} topic(s) without results scored 0")
        if pq.dropped:
            caveats.append(f"{name}: {len(pq.dropped)} run topic(s) without judgments ignored")

    per_query = {name: {str(m): pq.scores(m) for m in ms} for name, pq in results.items()}
    return Comparison(
        systems=tuple(named), baseline=base, measures=tuple(str(m) for m in ms), pairs=pairs,
        test=test, alpha=alpha, correction=correction if pairs == "baseline" else "tukey-hsd",
        resamples=resamples, seed=seed, confidence_level=confidence_level,
        rel_level=rel_level, topics=topics, n_topics=n_topics, rows=tuple(rows),
        judged=judged, per_query=per_query, tukey=tukey, caveats=tuple(caveats),
        complete_judgments=complete_judgments,
    )


def _judged_notes(judged: Mapping[str, Mapping[str, float]], baseline: str, candidate: str,
                  jm: Measure) -> tuple[str, ...]:
    key = str(jm)
    jb, jc = judged[baseline][key], judged[candidate][key]
    notes = []
    for name, value in ((candidate, jc), (baseline, jb)):
        if value < JUDGED_FLOOR:
            notes.append(f"{name} {key} = {value:.2f}: unjudged documents count as non-relevant "
                         "and may bias this comparison")
    if abs(jc - jb) > JUDGED_GAP and not notes:
        notes.append(f"{key} differs ({candidate} {jc:.2f} vs {baseline} {jb:.2f}): unjudged "
                     "documents count as non-relevant and may bias this comparison")
    return tuple(notes)


def load_comparison(data: Mapping[str, Any]) -> dict[str, Any]:
    """Check that a parsed JSON document is a rankproof comparison and return it."""
    if data.get("kind") != "rankproof.comparison":
        raise ValueError("not a rankproof comparison JSON document (missing kind)")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"unsupported comparison schema_version {data.get('schema_version')!r}")
    return dict(data)


def pilot_deltas(doc: Mapping[str, Any], *, candidate: str | None = None,
                 measure: str | None = None) -> tuple[str, str, np.ndarray]:
    """Per-query differences of one (candidate, measure) row of a saved comparison."""
    data = load_comparison(doc)
    baseline = data["baseline"]
    cands = [s for s in data["systems"] if s != baseline]
    cand = candidate or cands[0]
    meas = measure or data["measures"][0]
    if cand not in data["per_query"]:
        raise ValueError(f"no system {cand!r} in the comparison ({', '.join(data['systems'])})")
    if meas not in data["per_query"][cand]:
        raise ValueError(f"no measure {meas!r} in the comparison ({', '.join(data['measures'])})")
    b = data["per_query"][baseline][meas]
    c = data["per_query"][cand][meas]
    deltas = np.array([c[q] - b[q] for q in sorted(b)], dtype=np.float64)
    if not np.all(np.isfinite(deltas)) or math.isnan(float(deltas.sum())):
        raise ValueError("the comparison holds non-finite per-query values")
    return cand, meas, deltas

