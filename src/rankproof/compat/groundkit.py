"""groundkit's eval-harness API (seeds 000 and 002), spelled as groundkit spells it, over rankproof.

For code written against groundkit, change
``from groundkit.evals.significance import …`` and
``from groundkit.evals.beir import …`` to
``from rankproof.compat.groundkit import …``::

    result = paired_bootstrap({"q1": 0.2, "q2": 0.5}, {"q1": 0.4, "q2": 0.9},
                              baseline_name="bm25", candidate_name="fusion",
                              metric="ndcg_at_10")            # resamples=10_000, seed=7
    result.significant   # does the 95% interval exclude zero?

What each name is here:

* `paired_bootstrap` is `rankproof.stats.paired_test` with the bootstrap
  test, the percentile interval (numpy's linear-interpolation quantiles of
  the resampled means, as groundkit interpolates) and the **achieved
  significance level** p (``bootstrap_p="asl"``: ``min(1, 2(min(#≤0, #≥0)
  + 1)/(B + 1))`` over the resampled means), which is groundkit's.
  ``significant`` is decided by the interval, never by the p-value.
* `compare_report_stages` is `rankproof.harness.compare_report_stages`
  (which reads the report, refuses a repeated or unknown stage and a
  measure the report did not store) restricted to one measure; the
  `BootstrapResult` is then computed from that row's paired per-query values
  by `paired_bootstrap`, so the report is read by one reader only.
* `adapt_beir_dataset` is `rankproof.corpus.adapt_beir` with groundkit's
  output layout (``layout="groundkit"``: ``OUT/corpus/`` and
  ``OUT/judgments.jsonl``) and groundkit's refusal of judged query ids that
  are not kebab-case lowercase (``query_ids="refuse"``), its result
  renamed into `BeirAdaptationReport`'s fields.
* Metric names: groundkit's ``ndcg_at_10``, ``recall_at_k``, ``mrr_at_10``
  translate to rankproof's ``nDCG@10``, ``Success@k`` and ``RR@10``
  (`measure_name`). groundkit's recall@k is the **hit rate** ("did at
  least one correct answer appear in the top k"), which is rankproof's
  ``Success@k``, not trec_eval's recall ``R@k``. The translation is names
  only: the measures are rankproof's.
* ``EvalError`` is rankproof's `InputError` (a ValueError) under groundkit's
  name: every refusal here is one (`rankproof.PairingError` included).

The random stream differs from groundkit's (a ``numpy`` generator, not
``random.Random``): the same seed gives other resamples, so intervals and
p-values agree with groundkit's in distribution, not digit for digit; the
cases whose answer does not depend on the draw (constant deltas, all
positive deltas, identical systems) agree exactly. ``docs/compat.md`` lists
every difference.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from rankproof._errors import InputError, PairingError
from rankproof._limits import shown
from rankproof.corpus import adapt_beir
from rankproof.harness import EvalReport, read_report
from rankproof.harness import compare_report_stages as core_compare_report_stages
from rankproof.measures import parse
from rankproof.stats import paired_test

__all__ = [
    "BeirAdaptationReport",
    "BootstrapResult",
    "EvalError",
    "EvalReport",
    "adapt_beir_dataset",
    "compare_report_stages",
    "measure_name",
    "paired_bootstrap",
]

#: groundkit's defaults for `paired_bootstrap` and `compare_report_stages`.
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 7
DEFAULT_CONFIDENCE_LEVEL = 0.95

EvalError = InputError
"""groundkit's error: rankproof's `InputError` (a ValueError), which every refusal here is."""

MetricName = str
StageName = str

#: Name translation only: groundkit's metric family words → rankproof's measure families.
_FAMILIES = {"ndcg": "nDCG", "recall": "Success", "mrr": "RR"}
_GROUNDKIT_NAME = re.compile(r"^(?P<family>[a-z_]+?)(?:_at_(?P<k>[0-9]+))?$")


class BootstrapResult(BaseModel):
    """groundkit's machine-readable result of one paired-bootstrap comparison.

    ``effect`` is ``mean(candidate − baseline)`` over ``query_count``
    queries paired by id. ``confidence_interval_low``/``high``: the
    ``confidence_level`` percentile bootstrap interval of the mean
    difference. ``p_value_two_sided``: the achieved significance level
    ``min(1, 2(min(#≤0, #≥0) + 1)/(resamples + 1))`` over the resampled
    means — resamples of the *observed* deltas, not of a null-centred
    distribution, with a finite-sample correction so it is never 0.
    ``significant``: the interval excludes 0 (decided by the interval only).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    baseline: str
    candidate: str
    metric: str
    query_count: int
    resamples: int
    seed: int
    confidence_level: float
    effect: float
    confidence_interval_low: float
    confidence_interval_high: float
    p_value_two_sided: float
    significant: bool


class BeirAdaptationReport(BaseModel):
    """groundkit's counts and paths of one BEIR adaptation (`adapt_beir_dataset`).

    ``document_count``: documents written; ``query_count``: queries with a
    positive judgment (one judgments row each); ``relevance_pair_count``:
    positive (query, document) pairs; ``total_characters``: characters of
    all documents as written (title, blank line, text). Paths are absolute.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    source_dir: str
    output_dir: str
    split: str
    document_count: int
    query_count: int
    relevance_pair_count: int
    total_characters: int
    corpus_dir: str
    judgments_path: str


def _listed(ids: tuple[str, ...], most: int = 10) -> str:
    head = ", ".join(shown(i) for i in ids[:most])
    return (head + f" and {len(ids) - most} more" if len(ids) > most else head) or "none"


def measure_name(metric: MetricName) -> str:
    """rankproof's canonical measure for a groundkit metric name.

    ``ndcg_at_10`` → ``nDCG@10``; ``recall_at_5`` → ``Success@5`` (groundkit's
    recall@k is the hit rate); ``mrr_at_10`` → ``RR@10``; ``mrr`` → ``RR``.
    Any name rankproof's parser takes (``nDCG@10``, ``R@10``) is accepted as
    it is. An unknown name raises `InputError`.
    """
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a string, got {type(metric).__name__}")
    m = _GROUNDKIT_NAME.match(metric.strip())
    if m and m.group("family") in _FAMILIES:
        family = _FAMILIES[m.group("family")]
        spelled = family if m.group("k") is None else f"{family}@{m.group('k')}"
    else:
        spelled = metric
    try:
        return str(parse(spelled))
    except InputError as exc:
        raise InputError(f"unknown metric {shown(metric)}: not a groundkit name "
                         f"({', '.join(f'{k}_at_K' for k in _FAMILIES)}) nor a rankproof "
                         f"measure ({exc.reason})", field="metric") from None


def paired_bootstrap(
    baseline_scores: Mapping[str, float],
    candidate_scores: Mapping[str, float],
    *,
    baseline_name: str,
    candidate_name: str,
    metric: MetricName,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> BootstrapResult:
    """Compare two systems by resampling paired per-query deltas (candidate − baseline).

    ``*_scores`` are ``{query id: score}``. Computed by
    `rankproof.stats.paired_test` (``"bootstrap"``, percentile interval,
    ``bootstrap_p="asl"``); see `BootstrapResult` for every field. ``metric``
    is a label, recorded as given. Raises ``EvalError`` (`InputError`) for
    ``resamples`` < 1, a ``confidence_level`` outside (0, 1), no queries, a
    score that is not finite, and (as `rankproof.PairingError`, its
    ``only_left``/``only_right`` the ids missing from the candidate / the
    baseline, in the seed's order) query ids that differ between the sides.
    """
    for what, value in (("baseline_name", baseline_name), ("candidate_name", candidate_name),
                        ("metric", metric)):
        if not isinstance(value, str) or not value:
            raise InputError(f"{what} must be a non-empty string, got {shown(value)}",
                             field=what)
    try:
        r = paired_test(candidate_scores, baseline_scores, "bootstrap", ci_method="percentile",
                        bootstrap_p="asl", resamples=resamples, seed=seed,
                        confidence_level=confidence_level)
    except PairingError as exc:  # the core says a/b; groundkit's callers think in sides
        missing_candidate, missing_baseline = exc.only_right, exc.only_left
        raise PairingError(
            f"paired bootstrap query ids differ (missing from candidate: "
            f"{_listed(missing_candidate)}; missing from baseline: {_listed(missing_baseline)})",
            only_left=missing_candidate, only_right=missing_baseline) from None
    return BootstrapResult(
        baseline=baseline_name, candidate=candidate_name, metric=metric, query_count=r.n,
        resamples=resamples, seed=seed, confidence_level=confidence_level,
        effect=r.difference, confidence_interval_low=r.ci_low,
        confidence_interval_high=r.ci_high, p_value_two_sided=r.p_value,
        significant=bool(r.ci_low > 0.0 or r.ci_high < 0.0))


def compare_report_stages(
    report: EvalReport | str | os.PathLike[str],
    *,
    baseline: StageName,
    candidate: StageName,
    metric: MetricName,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> BootstrapResult:
    """Compare two stages of one saved eval report on one metric.

    ``report`` is an `EvalReport` or the path of one. The stages' stored
    per-query values are read and paired by
    `rankproof.harness.compare_report_stages` (which refuses a report with
    two stages of one name, an unknown stage, the same stage twice and a
    measure the report did not store, as ``EvalError``); the result is
    `paired_bootstrap` of those values. ``metric`` is a groundkit name
    (``ndcg_at_10``) or a rankproof one (`measure_name`); a bare ``mrr`` reads
    the report's one ``RR@k`` when it stores no cutoff-free RR (the default
    report stores ``RR@10``). Anything but a report or a path is an
    ``EvalError`` saying so.
    """
    if not isinstance(report, EvalReport | str | os.PathLike):
        raise EvalError(f"report must be an EvalReport (or the path of a saved report, as "
                        f"grk eval writes evals/results/latest.json), got "
                        f"{type(report).__name__}", field="report")
    loaded = report if isinstance(report, EvalReport) else read_report(report)
    measure = _stored(loaded, measure_name(metric))
    comparison = core_compare_report_stages(
        loaded, baseline=baseline, candidate=candidate, measures=[measure],
        test="bootstrap", correction="none", resamples=resamples, seed=seed,
        confidence_level=confidence_level)
    row = comparison.rows[0]
    return paired_bootstrap(
        dict(zip(row.qids, row.baseline_values, strict=True)),
        dict(zip(row.qids, row.candidate_values, strict=True)),
        baseline_name=baseline, candidate_name=candidate, metric=metric,
        resamples=resamples, seed=seed, confidence_level=confidence_level)


def _stored(report: EvalReport, measure: str) -> str:
    """groundkit's bare ``mrr`` on a report that stores no cutoff-free RR: the report's one
    ``RR@k`` (groundkit's MRR reads the results list it returns; rankproof's default
    report stores ``RR@10``). Any other measure is looked up as named."""
    if measure != "RR":
        return measure
    stored = {m for stage in report.stages for values in stage.per_query.values()
              for m in values}
    if "RR" in stored:
        return measure
    cut = sorted((m for m in stored if m.startswith("RR@")), key=lambda m: int(m[3:]))
    return cut[0] if len(cut) == 1 else measure


def adapt_beir_dataset(
    source_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    *,
    split: str = "test",
) -> BeirAdaptationReport:
    """Convert a BEIR folder into groundkit's layout, writing nothing unless all of it is valid.

    `rankproof.corpus.adapt_beir` with ``layout="groundkit"`` (documents in
    ``output_dir/corpus/``, judgments in ``output_dir/judgments.jsonl``) and
    ``query_ids="refuse"`` (a judged query id that is not kebab-case
    lowercase is refused, listed, before anything is written). Every gold
    quote is the whole document text. Raises ``EvalError`` (`InputError`,
    with file, line and field) for missing or malformed files, unsafe or
    colliding ids, empty documents or queries, qrels naming unknown
    documents or queries, a split with no positive row, and an output
    folder that exists and is not empty.
    """
    done = adapt_beir(source_dir, output_dir, split=split, layout="groundkit",
                      query_ids="refuse")
    return BeirAdaptationReport(
        source_dir=str(Path(done.source).resolve()), output_dir=str(Path(done.out).resolve()),
        split=done.split, document_count=done.documents, query_count=done.queries,
        relevance_pair_count=done.positives, total_characters=done.characters,
        corpus_dir=str(Path(done.docs_dir).resolve()),
        judgments_path=str(Path(done.judgments_path).resolve()))
