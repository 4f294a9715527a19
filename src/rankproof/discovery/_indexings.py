"""Indexing bake-offs: did a new index (descriptions, embedder, mode) help, and whom did it hurt?

`compare_indexings` searches the same themes (and, optionally, discovery
cases) with every labelled source — typically one catalogue built from
different descriptions, or one service behind different configurations —
and reports, per label and theme, graded nDCG@k (rankproof's measures engine
over `to_graded_qrels`), the named-set rates, and the rank and score of every
named id. The first label is the baseline.

A mean can rise while the one package users came for vanishes, so
`ComparisonReport.regressions` lists the named ids that got worse: a hard
positive that fell (or dropped out of the ranking) and a distractor that rose
(or newly appeared). It returns an empty list when nothing regressed, so
``assert not report.regressions()`` is a test. When discovery cases are given
too, their per-case nDCG@k is compared through rankproof's paired test,
pairing per case (never per theme: a handful of themes is no sample), so
"better" means significantly better.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankproof._errors import InputError
from rankproof.comparison import Comparison, compare_scores
from rankproof.data import Qrels
from rankproof.discovery._cases import DiscoveryCase, to_qrels
from rankproof.discovery._defaults import DFLT_MODE, LEVEL_GAINS
from rankproof.discovery._graded import (
    NamedSets,
    PackageRelevanceCase,
    fp_rate_on_distractors,
    recall_on_hard_positives,
    to_graded_qrels,
)
from rankproof.discovery._source import Ranking, SearchSettings, as_searcher, rank_run, retrieve
from rankproof.measures import evaluate
from rankproof.retrieval import CrossEncoder, Embedder
from rankproof.stats import DEFAULT_ALPHA, DEFAULT_RESAMPLES, DEFAULT_SEED, Result, StatSettings

_ROLES = ("distractor", "hard_positive")


def _shown_rank(rank: float) -> str:
    return "absent" if math.isinf(rank) else f"rank {int(rank)}"


@dataclass(frozen=True)
class Regression(Result):
    """One named id that got worse under ``label`` than under ``baseline`` for ``theme``.

    ``role`` is ``"hard_positive"`` (its rank grew: it fell or vanished) or
    ``"distractor"`` (its rank shrank: it rose or newly appeared). Ranks are
    1-based; ``math.inf`` means absent from the ranking (``null`` in JSON).
    """

    theme: str
    artifact_id: str
    role: str
    label: str
    baseline: str
    baseline_rank: float
    rank: float
    threshold: float

    @property
    def shift(self) -> float:
        """How many places it moved the wrong way (``inf`` for a vanished/new id)."""
        if self.role == "hard_positive":
            return self.rank - self.baseline_rank
        return self.baseline_rank - self.rank

    def __str__(self) -> str:
        what = "hard positive" if self.role == "hard_positive" else "distractor"
        verb = "fell" if self.role == "hard_positive" else "rose"
        return (f"{self.theme}: {what} {self.artifact_id!r} {verb} from "
                f"{_shown_rank(self.baseline_rank)} under {self.baseline!r} to "
                f"{_shown_rank(self.rank)} under {self.label!r}")


@dataclass(frozen=True)
class ComparisonReport(Result):
    """The outcome of `compare_indexings`: an N-way indexing bake-off.

    ``metrics[label][theme]`` holds ``ndcg`` (graded nDCG@``k``) and, when
    the theme has named sets, ``fp_rate`` (if it names distractors) and
    ``hard_positive_recall`` (if it names hard positives).
    ``deltas[theme][id]`` is ``{"role", "by_label": {label: {"rank",
    "score"}}}`` for every named id; ``ranks[label][theme][id]`` the same
    ranks (1-based, ``math.inf`` when absent within ``rank_depth``; ``null``
    in JSON). With discovery cases, ``case_ndcg[label][qid]`` is each gold
    case's nDCG@``k`` (qids by position, `case_id`) and ``case_comparison``
    the paired comparison of every label with the baseline over those cases.
    ``modes``/``identities`` say what searched under each label; ``degraded``
    is True when any searcher was (its notes say why).
    """

    k: int
    themes: tuple[str, ...]
    labels: tuple[str, ...]
    baseline: str
    metrics: Mapping[str, Mapping[str, Mapping[str, float]]]
    deltas: Mapping[str, Mapping[str, Mapping[str, Any]]]
    ranks: Mapping[str, Mapping[str, Mapping[str, float]]] = field(default_factory=dict)
    probes: Mapping[str, str] = field(default_factory=dict)
    rank_depth: int = 1000
    gains: Mapping[str, float] = field(default_factory=dict)
    mode: str = DFLT_MODE
    modes: Mapping[str, str] = field(default_factory=dict)
    identities: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    degraded: bool = False
    notes: tuple[str, ...] = ()
    case_ndcg: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    case_comparison: Comparison | None = None

    def regressions(self, threshold: float = 0, baseline: str | None = None
                    ) -> list[Regression]:
        """Named ids that got worse than under ``baseline`` (default: the report's).

        A hard positive regresses when its rank grows by more than
        ``threshold`` places, a distractor when its rank shrinks by more than
        ``threshold``. An id absent from a ranking has rank infinity, so a
        vanished hard positive and a newly appearing distractor count
        whatever the threshold; an id absent on both sides does not. Sorted
        by theme, label, role and id; empty when nothing regressed.
        """
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) \
                or not threshold >= 0 or math.isnan(threshold):
            raise InputError(f"threshold must be a number >= 0, got {threshold!r}",
                             field="threshold")
        base = self.baseline if baseline is None else baseline
        if base not in self.labels:
            raise InputError(f"baseline {base!r} is not one of the labels: "
                             f"{', '.join(self.labels)}", field="baseline")
        out: list[Regression] = []
        for theme in self.themes:
            for doc, entry in self.deltas.get(theme, {}).items():
                role = entry["role"]
                by_label = entry["by_label"]
                before = by_label[base]["rank"]
                for label in self.labels:
                    if label == base:
                        continue
                    after = by_label[label]["rank"]
                    if math.isinf(before) and math.isinf(after):
                        continue
                    moved = after - before if role == "hard_positive" else before - after
                    if moved > threshold:
                        out.append(Regression(theme, doc, role, label, base, before, after,
                                              float(threshold)))
        return sorted(out, key=lambda r: (r.theme, r.label, r.role, r.artifact_id))

    def verdicts(self) -> dict[str, str]:
        """``{label: verdict}`` of the paired case comparison (empty without discovery cases)."""
        if self.case_comparison is None:
            return {}
        return {row.candidate: row.verdict for row in self.case_comparison.rows}

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["kind"] = "rankproof.discovery.comparison"
        return out

    def __str__(self) -> str:
        lines = [f"indexing comparison @{self.k}, baseline {self.baseline!r}"
                 + (" [degraded]" if self.degraded else "")]
        for label in self.labels:
            cells = []
            for theme in self.themes:
                m = self.metrics[label][theme]
                cell = f"{theme}: nDCG {m['ndcg']:.3f}"
                if "fp_rate" in m:
                    cell += f", FP {m['fp_rate']:.2f}"
                if "hard_positive_recall" in m:
                    cell += f", HP recall {m['hard_positive_recall']:.2f}"
                cells.append(cell)
            verdict = self.verdicts().get(label)
            lines.append(f"  {label}: " + "; ".join(cells)
                         + (f" — cases: {verdict}" if verdict else ""))
        return "\n".join(lines)


def _check_inputs(sources: Any, themes: Any, probes: Any, k: Any, rank_depth: Any
                  ) -> tuple[list[str], list[str]]:
    if not isinstance(sources, Mapping) or len(sources) < 2:
        got = len(sources) if isinstance(sources, Mapping) else type(sources).__name__
        raise InputError(f"sources must map at least two labels to sources (the first is the "
                         f"baseline), got {got}", field="sources")
    labels = list(sources)
    for label in labels:
        if not isinstance(label, str) or not label:
            raise InputError(f"labels are non-empty strings, got {label!r}", field="sources")
    if isinstance(themes, str) or not isinstance(themes, Sequence) or not themes:
        raise InputError(f"themes must be a non-empty list of theme names, got {themes!r}",
                         field="themes")
    theme_list = list(themes)
    for theme in theme_list:
        if not isinstance(theme, str) or not theme:
            raise InputError(f"a theme is a non-empty string, got {theme!r}", field="themes")
    if len(set(theme_list)) != len(theme_list):
        raise InputError(f"themes lists a theme twice: {theme_list}", field="themes")
    if not isinstance(probes, Mapping):
        raise InputError(f"probes must map each theme to its query text, got {probes!r}",
                         field="probes")
    missing = [t for t in theme_list if t not in probes]
    if missing:
        raise InputError(f"no probe for theme(s) {', '.join(missing)}", field="probes")
    for theme in theme_list:
        if not isinstance(probes[theme], str) or not probes[theme].strip():
            raise InputError(f"the probe of {theme!r} must be a non-empty query text, got "
                             f"{probes[theme]!r}", field="probes")
    for name, value in (("k", k), ("rank_depth", rank_depth)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{name} must be a positive integer, got {value!r}", field=name)
    if rank_depth < k:
        raise InputError(f"rank_depth ({rank_depth}) must be at least k ({k})",
                         field="rank_depth")
    return labels, theme_list


def _named_by_theme(named_sets: Any, themes: Sequence[str]) -> dict[str, NamedSets]:
    if named_sets is None:
        return {}
    items = list(named_sets.items()) if isinstance(named_sets, Mapping) else \
        [(getattr(ns, "theme", None), ns) for ns in named_sets]
    out: dict[str, NamedSets] = {}
    for key, ns in items:
        if not isinstance(ns, NamedSets):
            raise InputError(f"named_sets holds a {type(ns).__name__}, not a NamedSets",
                             field="named_sets")
        if key != ns.theme:
            raise InputError(f"named_sets key {key!r} holds the sets of theme {ns.theme!r}",
                             field="named_sets")
        if ns.theme not in themes:
            raise InputError(f"named_sets names theme {ns.theme!r}, which is not compared "
                             f"(themes: {', '.join(themes)})", field="named_sets")
        if ns.theme in out:
            raise InputError(f"named_sets gives theme {ns.theme!r} twice", field="named_sets")
        out[ns.theme] = ns
    return out


def _positions(ranking: Ranking) -> dict[str, tuple[int, float]]:
    out: dict[str, tuple[int, float]] = {}
    for doc, score in ranking:
        if doc not in out:
            out[doc] = (len(out) + 1, float(score))
    return out


def compare_indexings(
    sources: Mapping[str, Any],
    cases: Iterable[PackageRelevanceCase],
    *,
    themes: Sequence[str],
    probes: Mapping[str, str],
    k: int = 20,
    named_sets: Mapping[str, NamedSets] | Sequence[NamedSets] | None = None,
    mode: str = DFLT_MODE,
    rank_depth: int = 1000,
    gains: Mapping[str, float] = LEVEL_GAINS,
    discovery_cases: Sequence[DiscoveryCase] | None = None,
    embedder: Embedder | None = None,
    rerank: CrossEncoder | None = None,
    alpha: float = DEFAULT_ALPHA,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    search: SearchSettings | Mapping[str, Any] | None = None,
    search_by_label: Mapping[str, SearchSettings | Mapping[str, Any]] | None = None,
) -> ComparisonReport:
    """Compare labelled sources (``{label: source}``, the first the baseline) theme by theme.

    Each source (anything `as_searcher` takes; give a `Searcher` to fix a
    label's own mode) is searched **once**, to depth ``rank_depth``, with
    every theme probe (``probes``, usually `read_package_meta`'s) and every
    discovery case query; ``@k`` numbers use the first ``k``. Graded nDCG@k
    comes from rankproof's measures engine over `to_graded_qrels` (``gains``);
    the named-set rates and the rank/score of each named id from the same
    rankings (an id beyond ``rank_depth`` is absent: rank infinity). With
    ``discovery_cases``, per-case nDCG@k of the gold cases is compared with
    the baseline's by `rankproof.comparison.compare_scores` (``alpha``,
    ``resamples``, ``seed``), each case one pair.

    ``search`` holds the search settings every label shares (`SearchSettings`);
    ``search_by_label`` overrides them per label (merged over ``search``), so
    one catalogue under several labels compares *search* configurations. Each
    label's settings are recorded in its identity.
    """
    labels, theme_list = _check_inputs(sources, themes, probes, k, rank_depth)
    shared = SearchSettings.of(search)
    per_label = dict(search_by_label or {})
    stray = sorted(set(per_label) - set(labels))
    if stray:
        raise InputError(f"search_by_label names label(s) not compared: {', '.join(stray)}; "
                         f"the labels are {', '.join(labels)}", field="search_by_label")
    settings = {label: shared.merged(per_label.get(label)) for label in labels}
    cases = list(cases)
    by_theme = _named_by_theme(named_sets, theme_list)
    judged: dict[str, dict[str, int]] = {}
    for theme in theme_list:
        _, q = to_graded_qrels(cases, theme, probe=probes[theme], gains=gains, query_id=theme)
        judged.update(q.to_dict())
    qrels = Qrels.from_dict(judged)
    case_queries: list[str] = []
    case_qids: list[str] = []
    case_qrels: Qrels | None = None
    if discovery_cases is not None:
        queries, case_qrels = to_qrels(list(discovery_cases))
        case_qids = list(queries)
        case_queries = [queries[q] for q in case_qids]
    measure = f"nDCG@{k}"
    metrics: dict[str, dict[str, dict[str, float]]] = {}
    ranks: dict[str, dict[str, dict[str, float]]] = {}
    scores: dict[str, dict[str, dict[str, float | None]]] = {}
    case_ndcg: dict[str, dict[str, float]] = {}
    modes: dict[str, str] = {}
    identities: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    degraded = False
    labelled_ids = {c.artifact_id for c in cases}
    for label in labels:
        searcher = as_searcher(sources[label], mode=mode, embedder=embedder, rerank=rerank,
                               search=settings[label])
        rankings = retrieve(searcher, [probes[t] for t in theme_list] + case_queries,
                            rank_depth)
        theme_rankings = dict(zip(theme_list, rankings[:len(theme_list)], strict=True))
        modes[label] = searcher.mode
        identities[label] = dict(searcher.identity)
        degraded = degraded or searcher.degraded
        notes.extend(f"{label}: {n}" for n in searcher.notes)
        if searcher.ids is not None:
            unknown = sorted(labelled_ids - set(searcher.ids))
            if unknown:
                notes.append(f"{label}: {len(unknown)} labelled artifact(s) are not in its "
                             f"catalogue: {', '.join(unknown[:5])}"
                             f"{' …' if len(unknown) > 5 else ''}")
        per_theme = evaluate(qrels, rank_run({t: r[:k] for t, r in theme_rankings.items()},
                                             name=label),
                             [measure], topics="complete-allow-disjoint").scores(measure)
        metrics[label] = {}
        ranks[label] = {}
        scores[label] = {}
        for theme in theme_list:
            top = theme_rankings[theme]
            row: dict[str, float] = {"ndcg": per_theme[theme]}
            ns = by_theme.get(theme)
            if ns is not None and ns.distractors:
                row["fp_rate"] = fp_rate_on_distractors(top, ns.distractors, k=k)
            if ns is not None and ns.hard_positives:
                row["hard_positive_recall"] = recall_on_hard_positives(top, ns.hard_positives,
                                                                       k=k)
            metrics[label][theme] = row
            where = _positions(top)
            named = ns.named if ns is not None else {}
            ranks[label][theme] = {d: float(where[d][0]) if d in where else math.inf
                                   for d in named}
            scores[label][theme] = {d: where[d][1] if d in where else None for d in named}
        if case_qrels is not None:
            run = rank_run({q: r[:k] for q, r in zip(case_qids, rankings[len(theme_list):],
                                                     strict=True)}, name=label)
            case_ndcg[label] = evaluate(case_qrels, run, [measure],
                                        topics="complete-allow-disjoint").scores(measure)
    deltas: dict[str, dict[str, dict[str, Any]]] = {}
    for theme, ns in by_theme.items():
        deltas[theme] = {
            doc: {"role": role,
                  "by_label": {label: {"rank": ranks[label][theme][doc],
                                       "score": scores[label][theme][doc]}
                               for label in labels}}
            for doc, role in sorted(ns.named.items())}
    comparison = None
    if case_ndcg:
        comparison = compare_scores({label: {measure: case_ndcg[label]} for label in labels},
                                    baseline=labels[0], higher_is_better={measure: True},
                                    stats=StatSettings(alpha=alpha, resamples=resamples,
                                                       seed=seed), unit="case")
    return ComparisonReport(
        k=k, themes=tuple(theme_list), labels=tuple(labels), baseline=labels[0],
        metrics=metrics, deltas=deltas, ranks=ranks,
        probes={t: probes[t] for t in theme_list}, rank_depth=rank_depth,
        gains=dict(gains), mode=mode, modes=modes, identities=identities,
        degraded=degraded, notes=tuple(notes), case_ndcg=case_ndcg,
        case_comparison=comparison)
