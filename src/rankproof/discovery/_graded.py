"""Graded themes and named sets: which artifacts matter for a theme, and how much.

A `DiscoveryCase` asks "which ids answer this query?" with flat gold. A theme
("data lineage", "feature stores") is judged the other way round: each
artifact carries a graded *level* per theme (`RELEVANCE_LEVELS`, weakest
first), and the level's gain (`LEVEL_GAINS`: 0/0/1/2/3) is what graded nDCG
rewards, so a ranking that puts ``core`` items first beats one that puts
``uses-tools`` items first at the same recall.

One headline number still hides the two failures a change to an index most
often causes, so each theme may also carry two **named sets**
(`derive_named_sets`): *distractors* (non-relevant items that rank high: every
one in the top ``k`` is a false positive) and *hard positives* (relevant items
with thin descriptions: the ones an index struggles to surface). The rates on
them always come with the ids behind them (`NamedSetReport`), so a number can
be traced back to specific items.

Files are JSON Lines, one artifact per line, after an optional
``{"__meta__": {...}}`` first line holding the per-theme probe text
(``probes``: the query each theme is scored with) and whatever pins the labels
to a catalogue snapshot. Every problem is an `InputError` naming the file, the
line and the field, and a refused write leaves nothing behind.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankproof._errors import InputError
from rankproof._io import PathLike, atomic_write
from rankproof.data import Qrels, check_keys, read_jsonl
from rankproof.discovery._cases import META_KEY, _meta
from rankproof.discovery._defaults import DFLT_MODE, LEVEL_GAINS, RELEVANCE_LEVELS
from rankproof.discovery._source import SearchSettings, as_searcher, retrieve
from rankproof.retrieval import CrossEncoder, Embedder
from rankproof.stats import Result

_CASE_KEYS = ("artifact_id", "labels", "evidence", "observed", "thin_description",
              "is_distractor", "metadata")
_SETS_KEYS = ("theme", "distractors", "hard_positives")
#: The levels a hard positive may have: relevant, not merely a user of the tooling.
_HARD_LEVELS = ("strong", "core")


def _str_map(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"{name} must be an object {{theme: ...}}, got {value!r}", field=name)
    for key in value:
        if not isinstance(key, str) or not key:
            raise InputError(f"{name} keys are theme names (non-empty strings), got {key!r}",
                             field=name)
    return dict(value)


@dataclass(frozen=True)
class PackageRelevanceCase:
    """One artifact's graded relevance to one or more themes.

    ``labels`` maps a theme to a level of `RELEVANCE_LEVELS` (an unlabelled
    theme reads as ``"none"``); ``evidence`` gives the human reason per theme;
    ``observed`` the score the artifact got for the theme's probe in the run
    the labels were made from (what marks a prominent distractor);
    ``thin_description`` flags an artifact whose description says little (what
    marks a hard positive); ``is_distractor`` an explicit per-theme decision
    that overrides the observed-score rule; ``metadata`` anything else.
    """

    artifact_id: str
    labels: Mapping[str, str] = field(default_factory=dict)
    evidence: Mapping[str, str] = field(default_factory=dict)
    observed: Mapping[str, float] = field(default_factory=dict)
    thin_description: bool = False
    is_distractor: Mapping[str, bool] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.artifact_id, str) or not self.artifact_id.strip():
            raise InputError(f"artifact_id must be a non-empty string, got {self.artifact_id!r}",
                             field="artifact_id")
        labels = _str_map(self.labels, "labels")
        for theme, level in labels.items():
            if level not in RELEVANCE_LEVELS:
                raise InputError(f"level {level!r} for theme {theme!r} is not one of "
                                 f"{', '.join(RELEVANCE_LEVELS)}", field="labels")
        evidence = _str_map(self.evidence, "evidence")
        for theme, why in evidence.items():
            if not isinstance(why, str):
                raise InputError(f"evidence for theme {theme!r} must be a string, got {why!r}",
                                 field="evidence")
        observed = _str_map(self.observed, "observed")
        for theme, score in observed.items():
            if isinstance(score, bool) or not isinstance(score, int | float) \
                    or not math.isfinite(score):
                raise InputError(f"observed score for theme {theme!r} must be a finite number, "
                                 f"got {score!r}", field="observed")
            observed[theme] = float(score)
        flags = _str_map(self.is_distractor, "is_distractor")
        for theme, flag in flags.items():
            if not isinstance(flag, bool):
                raise InputError(f"is_distractor for theme {theme!r} must be true or false, "
                                 f"got {flag!r}", field="is_distractor")
        if not isinstance(self.thin_description, bool):
            raise InputError(f"thin_description must be true or false, got "
                             f"{self.thin_description!r}", field="thin_description")
        if not isinstance(self.metadata, Mapping):
            raise InputError(f"metadata must be an object, got {self.metadata!r}",
                             field="metadata")
        for name, value in (("labels", labels), ("evidence", evidence), ("observed", observed),
                            ("is_distractor", flags), ("metadata", dict(self.metadata))):
            object.__setattr__(self, name, value)

    def level(self, theme: str) -> str:
        """The artifact's level for ``theme``; ``"none"`` when it is not labelled."""
        return self.labels.get(theme, "none")

    def gain(self, theme: str, *, gains: Mapping[str, float] = LEVEL_GAINS) -> float:
        """The graded gain for ``theme``; a level ``gains`` does not list gains 0 (non-relevant)."""
        return float(gains.get(self.level(theme), 0.0))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PackageRelevanceCase:
        """The inverse of `to_dict`; an unknown key or level is refused by name."""
        if not isinstance(d, Mapping):
            raise InputError(f"a package case is a JSON object, got {type(d).__name__}")
        check_keys(d, _CASE_KEYS, "a package case")
        if "artifact_id" not in d:
            raise InputError("a package case needs an artifact_id", field="artifact_id")
        return cls(artifact_id=d["artifact_id"], labels=_or_empty(d, "labels"),
                   evidence=_or_empty(d, "evidence"), observed=_or_empty(d, "observed"),
                   thin_description=d.get("thin_description", False),
                   is_distractor=_or_empty(d, "is_distractor"),
                   metadata=_or_empty(d, "metadata"))

    def to_dict(self) -> dict[str, Any]:
        """JSON form; empty optional fields are left out (``labels`` is always written)."""
        out: dict[str, Any] = {"artifact_id": self.artifact_id, "labels": dict(self.labels)}
        for name in ("evidence", "observed"):
            if getattr(self, name):
                out[name] = dict(getattr(self, name))
        if self.thin_description:
            out["thin_description"] = True
        for name in ("is_distractor", "metadata"):
            if getattr(self, name):
                out[name] = dict(getattr(self, name))
        return out


def _or_empty(d: Mapping[str, Any], key: str) -> Any:
    value = d.get(key)
    return {} if value is None else value


# -- files ----------------------------------------------------------------------------------

def _check_meta(meta: Any, path: str | None = None, line: int | None = None) -> dict[str, Any]:
    """A header is an object; its ``probes``, when present, map themes to query text."""
    if not isinstance(meta, Mapping):
        raise InputError(f"{META_KEY} must be an object, got {type(meta).__name__}",
                         path=path, line=line, field=META_KEY)
    probes = meta.get("probes")
    if probes is not None:
        if not isinstance(probes, Mapping):
            raise InputError(f"probes must be an object {{theme: query text}}, got {probes!r}",
                             path=path, line=line, field=f"{META_KEY}.probes")
        for theme, text in probes.items():
            if not isinstance(theme, str) or not theme or not isinstance(text, str) \
                    or not text.strip():
                raise InputError(f"probe {theme!r} must be a non-empty query text, got "
                                 f"{text!r}", path=path, line=line,
                                 field=f"{META_KEY}.probes")
    return dict(meta)


def _rows(path: PathLike) -> tuple[dict[str, Any], list[PackageRelevanceCase]]:
    where = str(path)
    meta: dict[str, Any] = {}
    cases: list[PackageRelevanceCase] = []
    first_line: dict[str, int] = {}
    first = True
    for lineno, obj in read_jsonl(path):
        header = _meta(obj, where, lineno)
        if header is not None:
            if not first:
                raise InputError(f"{META_KEY} may only be the first line", path=where,
                                 line=lineno, field=META_KEY)
            meta = _check_meta(header, where, lineno)
            first = False
            continue
        first = False
        try:
            case = PackageRelevanceCase.from_dict(obj)
        except InputError as exc:
            raise InputError(exc.reason, path=where, line=lineno, field=exc.field) from None
        if case.artifact_id in first_line:
            raise InputError(f"artifact {case.artifact_id!r} is listed twice (first on line "
                             f"{first_line[case.artifact_id]}): one line per artifact",
                             path=where, line=lineno, field="artifact_id")
        first_line[case.artifact_id] = lineno
        cases.append(case)
    return meta, cases


def load_package_cases(path: PathLike) -> list[PackageRelevanceCase]:
    """Read package cases from JSONL (a leading ``__meta__`` line is checked, then skipped)."""
    _, cases = _rows(path)
    if not cases:
        raise InputError("the file holds no package cases", path=str(path))
    return cases


def read_package_meta(path: PathLike) -> dict[str, Any]:
    """The ``__meta__`` header of a package-cases file (``{}`` without one).

    It carries what a per-artifact line cannot: the probe text of each theme
    (``probes``) and the catalogue snapshot the labels were made against.
    The whole file is checked, so a header is never trusted from a bad file.
    """
    meta, _ = _rows(path)
    return meta


def save_package_cases(cases: Iterable[PackageRelevanceCase], path: PathLike, *,
                       meta: Mapping[str, Any] | None = None) -> None:
    """Write package cases as JSONL (atomically), after a ``{"__meta__": meta}`` line if given.

    Everything is checked and serialised before the file is opened, so a bad
    case or header writes nothing.
    """
    lines: list[str] = []
    if meta is not None:
        header = _check_meta(meta, str(path))
        try:
            lines.append(json.dumps({META_KEY: header}, ensure_ascii=False, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise InputError(f"{META_KEY} is not JSON-serialisable: {exc}", path=str(path),
                             field=META_KEY) from None
    seen: set[str] = set()
    for i, case in enumerate(cases):
        if not isinstance(case, PackageRelevanceCase):
            raise InputError(f"case {i} is a {type(case).__name__}, not a PackageRelevanceCase",
                             path=str(path))
        if case.artifact_id in seen:
            raise InputError(f"artifact {case.artifact_id!r} is listed twice", path=str(path),
                             field="artifact_id")
        seen.add(case.artifact_id)
        try:
            lines.append(json.dumps(case.to_dict(), ensure_ascii=False, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise InputError(f"case {case.artifact_id!r} is not JSON-serialisable: {exc}",
                             path=str(path), field="metadata") from None
    with atomic_write(path) as out:
        for line in lines:
            out.write(line + "\n")


# -- graded qrels ---------------------------------------------------------------------------

def check_gains(gains: Mapping[str, float]) -> dict[str, int]:
    """``gains`` as integer grades (qrels labels are integers; nDCG uses them as gains)."""
    if not isinstance(gains, Mapping):
        raise InputError(f"gains must map levels to numbers, got {gains!r}", field="gains")
    out: dict[str, int] = {}
    for level, gain in gains.items():
        if level not in RELEVANCE_LEVELS:
            raise InputError(f"gains name level {level!r}, which is not one of "
                             f"{', '.join(RELEVANCE_LEVELS)}", field="gains")
        if isinstance(gain, bool) or not isinstance(gain, int | float) \
                or not math.isfinite(gain) or gain < 0 or float(gain) != int(gain):
            raise InputError(f"the gain of {level!r} must be a non-negative whole number "
                             f"(qrels grades are integers), got {gain!r}", field="gains")
        out[level] = int(gain)
    return out


def _theme(theme: Any) -> str:
    if not isinstance(theme, str) or not theme:
        raise InputError(f"a theme is a non-empty string, got {theme!r}", field="theme")
    return theme


def to_graded_qrels(cases: Sequence[PackageRelevanceCase], theme: str, *,
                    probe: str | None = None, gains: Mapping[str, float] = LEVEL_GAINS,
                    query_id: str | None = None) -> tuple[dict[str, str], Qrels]:
    """``(queries, qrels)`` for one theme: one query (its probe), graded judgments.

    Each artifact is judged at its level's gain (``uses-tools`` 1, ``strong``
    2, ``core`` 3 by default), so graded nDCG rewards putting the strongest
    first; artifacts whose gain is 0 (``none``, ``tangential``) are left out,
    as qrels list the judged-relevant. ``query_id`` defaults to the theme,
    ``probe`` (the query text) to the theme name. An artifact listed twice
    with different levels, or a theme without any relevant artifact (nDCG
    would have no ideal ranking), is refused.
    """
    theme = _theme(theme)
    grades = check_gains(gains)
    qid = theme if query_id is None else query_id
    text = theme if probe is None else probe
    if not isinstance(qid, str) or not qid:
        raise InputError(f"query_id must be a non-empty string, got {qid!r}", field="query_id")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"probe must be a non-empty query text, got {text!r}", field="probe")
    judged: dict[str, int] = {}
    for case in cases:
        grade = grades.get(case.level(theme), 0)
        if case.artifact_id in judged and judged[case.artifact_id] != grade:
            raise InputError(f"artifact {case.artifact_id!r} is listed twice with different "
                             f"levels for theme {theme!r}", field="artifact_id")
        judged[case.artifact_id] = grade
    positive = {a: g for a, g in judged.items() if g > 0}
    if not positive:
        raise InputError(f"no artifact is relevant to theme {theme!r} (every gain is 0): "
                         "graded nDCG has no ideal ranking to compare with", field="labels")
    return {qid: text}, Qrels.from_dict({qid: positive})


def level_histogram(cases: Iterable[PackageRelevanceCase], theme: str) -> dict[str, int]:
    """How many cases sit at each level for ``theme``, every level listed (weakest first).

    An unlabelled case counts as ``none``: the histogram sums to the number
    of cases, so a theme with few positives shows it.
    """
    theme = _theme(theme)
    counts = dict.fromkeys(RELEVANCE_LEVELS, 0)
    for case in cases:
        counts[case.level(theme)] += 1
    return counts


# -- named sets -----------------------------------------------------------------------------

def _id_tuple(values: Any, name: str) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InputError(f"{name} must be a list of ids, got {values!r}", field=name)
    out = []
    for v in values:
        if not isinstance(v, str) or not v:
            raise InputError(f"{name} holds {v!r}; ids are non-empty strings", field=name)
        out.append(v)
    return tuple(sorted(set(out)))


@dataclass(frozen=True)
class NamedSets(Result):
    """The two diagnostic sets of one theme (sorted, without repeats).

    ``distractors``: non-relevant ids that rank prominently; each one in the
    top ``k`` is a false positive. ``hard_positives``: relevant ids that are
    hard to rank (thin descriptions); recall on them is the gap a fix must
    close. An id cannot be both.
    """

    theme: str
    distractors: tuple[str, ...] = ()
    hard_positives: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _theme(self.theme)
        object.__setattr__(self, "distractors", _id_tuple(self.distractors, "distractors"))
        object.__setattr__(self, "hard_positives",
                           _id_tuple(self.hard_positives, "hard_positives"))
        both = sorted(set(self.distractors) & set(self.hard_positives))
        if both:
            raise InputError(f"theme {self.theme!r}: {', '.join(both)} cannot be both a "
                             "distractor and a hard positive", field="distractors")

    @property
    def named(self) -> dict[str, str]:
        """``{id: role}`` with role ``"distractor"`` or ``"hard_positive"``."""
        out = dict.fromkeys(self.distractors, "distractor")
        out.update(dict.fromkeys(self.hard_positives, "hard_positive"))
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> NamedSets:
        """The inverse of `to_dict`."""
        if not isinstance(d, Mapping):
            raise InputError(f"named sets are a JSON object, got {type(d).__name__}")
        check_keys(d, _SETS_KEYS, "a named-sets object")
        if "theme" not in d:
            raise InputError("named sets need a theme", field="theme")
        return cls(d["theme"], _or_list(d, "distractors"), _or_list(d, "hard_positives"))


def _or_list(d: Mapping[str, Any], key: str) -> Any:
    value = d.get(key)
    return () if value is None else value


def derive_named_sets(cases: Iterable[PackageRelevanceCase], theme: str, *,
                      observed_floor: float, gains: Mapping[str, float] = LEVEL_GAINS
                      ) -> NamedSets:
    """The named sets of ``theme``, derived from labels alone (same input, same sets).

    *Distractors*: non-relevant artifacts (gain 0 under ``gains``: ``none``
    and ``tangential`` by default) whose ``observed`` score for the theme is
    at or above ``observed_floor``, i.e. they ranked high enough to pollute
    the top ``k``; an artifact without an observed score is not one. An
    explicit ``is_distractor[theme]`` replaces the floor test for its
    artifact (``false`` keeps a high scorer out, ``true`` puts a low or
    unscored one in); marking a relevant artifact a distractor is refused.
    *Hard positives*: artifacts at ``strong`` or ``core`` (with a positive
    gain) flagged ``thin_description``. Both come back sorted, without
    repeats.
    """
    theme = _theme(theme)
    check_gains(gains)
    if isinstance(observed_floor, bool) or not isinstance(observed_floor, int | float) \
            or not math.isfinite(observed_floor):
        raise InputError(f"observed_floor must be a finite number, got {observed_floor!r}",
                         field="observed_floor")
    distractors: set[str] = set()
    hard: set[str] = set()
    for case in cases:
        relevant = case.gain(theme, gains=gains) > 0
        flag = case.is_distractor.get(theme)
        if relevant:
            if flag:
                raise InputError(f"artifact {case.artifact_id!r} is {case.level(theme)!r} for "
                                 f"theme {theme!r} yet is_distractor says it is a distractor",
                                 field="is_distractor")
            if case.thin_description and case.level(theme) in _HARD_LEVELS:
                hard.add(case.artifact_id)
            continue
        if flag is None:
            score = case.observed.get(theme)
            flag = score is not None and score >= observed_floor
        if flag:
            distractors.add(case.artifact_id)
    return NamedSets(theme, tuple(distractors), tuple(hard))


def _top_ids(ranking: Sequence[Any], k: int) -> list[str]:
    """The first ``k`` distinct ids of a ranking of ids or ``(id, score)`` pairs."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}", field="k")
    out: list[str] = []
    seen: set[str] = set()
    for entry in ranking:
        doc = entry if isinstance(entry, str) else entry[0]
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
            if len(out) == k:
                break
    return out


def fp_rate_on_distractors(ranking: Sequence[Any], distractor_ids: Iterable[str], *,
                           k: int) -> float:
    """The share of named distractors found in the top ``k`` of ``ranking`` (0.0 for none).

    ``ranking`` is best first, of ids or ``(id, score)`` pairs; an id named
    twice counts once. Lower is better.
    """
    named = set(distractor_ids)
    top = set(_top_ids(ranking, k))
    return len(named & top) / len(named) if named else 0.0


def recall_on_hard_positives(ranking: Sequence[Any], hard_positive_ids: Iterable[str], *,
                             k: int) -> float:
    """The share of named hard positives found in the top ``k`` (0.0 when none are named).

    Duplicate ids count once. Higher is better.
    """
    named = set(hard_positive_ids)
    top = set(_top_ids(ranking, k))
    return len(named & top) / len(named) if named else 0.0


@dataclass(frozen=True)
class NamedSetReport(Result):
    """Distractor false-positive rate and hard-positive recall at ``k`` for one theme.

    ``distractors_seen`` (in rank order) and ``hard_positives_missed``
    (sorted) name the ids behind each rate. ``mode``, ``degraded``,
    ``identity`` and ``notes`` say what searched (and anything it could not
    honour); ``absent`` lists named ids the searched catalogue does not hold
    (they can never be seen).
    """

    theme: str
    k: int
    fp_rate: float
    hard_positive_recall: float
    distractors_seen: tuple[str, ...] = ()
    hard_positives_missed: tuple[str, ...] = ()
    probe: str | None = None
    n_distractors: int = 0
    n_hard_positives: int = 0
    mode: str | None = None
    degraded: bool = False
    identity: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()

    def __str__(self) -> str:
        seen = ", ".join(self.distractors_seen) or "none"
        missed = ", ".join(self.hard_positives_missed) or "none"
        return (f"{self.theme} @{self.k}: distractor FP rate {self.fp_rate:.3f} "
                f"({len(self.distractors_seen)}/{self.n_distractors}; seen: {seen}), "
                f"hard-positive recall {self.hard_positive_recall:.3f} "
                f"(missed: {missed})" + (" [degraded]" if self.degraded else ""))


def score_named_sets(ranking: Sequence[Any], named_sets: NamedSets, *, k: int,
                     theme: str | None = None, probe: str | None = None,
                     ids: Iterable[str] | None = None, mode: str | None = None,
                     degraded: bool = False, identity: Mapping[str, Any] | None = None,
                     notes: Sequence[str] = ()) -> NamedSetReport:
    """`evaluate_named_sets` over a ranking already fetched (no search).

    ``ids`` (the catalogue's ids, when known) lets the report list named ids
    the catalogue lacks; the searcher fields are echoed into the report.
    """
    if not isinstance(named_sets, NamedSets):
        raise InputError(f"named_sets must be a NamedSets, got {type(named_sets).__name__}",
                         field="named_sets")
    label = named_sets.theme if theme is None else _theme(theme)
    top = _top_ids(ranking, k)
    in_top = set(top)
    distractors = set(named_sets.distractors)
    absent = () if ids is None else tuple(sorted(set(named_sets.named) - set(ids)))
    all_notes = tuple(notes)
    if absent:
        all_notes += (f"{len(absent)} named id(s) are not in the searched catalogue: "
                      f"{', '.join(absent[:5])}{' …' if len(absent) > 5 else ''}",)
    return NamedSetReport(
        theme=label, k=k,
        fp_rate=fp_rate_on_distractors(top, named_sets.distractors, k=k),
        hard_positive_recall=recall_on_hard_positives(top, named_sets.hard_positives, k=k),
        distractors_seen=tuple(d for d in top if d in distractors),
        hard_positives_missed=tuple(h for h in named_sets.hard_positives if h not in in_top),
        probe=probe, n_distractors=len(named_sets.distractors),
        n_hard_positives=len(named_sets.hard_positives), mode=mode, degraded=degraded,
        identity=dict(identity or {}), notes=all_notes, absent=absent)


def evaluate_named_sets(source: Any, named_sets: NamedSets, theme: str | None = None, *,
                        probe: str, mode: str = DFLT_MODE, k: int = 10,
                        embedder: Embedder | None = None, rerank: CrossEncoder | None = None,
                        search: SearchSettings | Mapping[str, Any] | None = None
                        ) -> NamedSetReport:
    """Search the theme's ``probe`` once and score its named sets at ``k``.

    ``theme`` only relabels the report (it defaults to ``named_sets.theme``).
    The report names the distractors seen and the hard positives missed, so
    each rate is auditable back to specific ids.
    """
    if not isinstance(probe, str) or not probe.strip():
        raise InputError(f"probe must be a non-empty query text, got {probe!r}", field="probe")
    searcher = as_searcher(source, mode=mode, embedder=embedder, rerank=rerank, search=search)
    ranking = retrieve(searcher, [probe], k)[0]
    return score_named_sets(ranking, named_sets, k=k, theme=theme, probe=probe,
                            ids=searcher.ids, mode=searcher.mode, degraded=searcher.degraded,
                            identity=searcher.identity, notes=searcher.notes)

