"""The abstention floor: which top score separates in-scope queries from out-of-scope ones.

A conservative selector abstains ("nothing in the catalogue applies") when
even its best candidate scores below ``min_score``. Picking that floor is a
one-dimensional classification problem: every in-scope query (a gold case
whose gold reached the top ``k``) should keep its top hit, every
out-of-scope query (an abstention case) should fall below the floor. So the
rule ``top score >= floor -> commit`` is scored as a binary classifier:

* sensitivity = in-scope queries kept / in-scope queries,
* specificity = out-of-scope queries refused / out-of-scope queries,
* Youden's J = sensitivity + specificity - 1, balanced accuracy = their mean,

and the floor maximising ``w * sensitivity + (1 - w) * specificity`` is
chosen from the candidate grid. The default grid is exact for a 1-D split:
the midpoints between adjacent distinct observed top scores, plus the two
extremes (the lowest score: commit everything; just above the highest:
abstain on everything). Ties go to the larger J, then to the **higher**
floor: a padded commit costs an agent more than a dropped one (the seed's
stance), so among equally good floors the stricter one wins.

Gold cases whose gold never reached the top ``k`` are *retrieval misses*:
excluded and counted, because whether the selector then commits says nothing
about in-scope recognition (the right item was never on offer). An
abstention case with an empty ranking is refused at every floor (there is
nothing to commit) and counted as such.

A floor only means something for the searcher it was calibrated on: the
calibration is stamped with the searcher's ``identity`` (catalogue digest,
mode, embedder and reranker; or a callable's ``MODULE:CALLABLE`` and
version) and `MinScoreCalibration.load` / `load_calibration` refuse a file
whose stamp differs from the current searcher, naming what changed. A stale
floor is never used.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from rankproof._errors import ConfigError, InputError
from rankproof._io import PathLike, atomic_write
from rankproof.data import parse_document
from rankproof.discovery._cases import DiscoveryCase, case_id, check_cases
from rankproof.discovery._defaults import DFLT_CALIB_SENSITIVITY_WEIGHT, DFLT_MODE
from rankproof.discovery._source import (
    CatalogSearcher,
    Ranking,
    Searcher,
    SearchSettings,
    as_searcher,
    retrieve,
)
from rankproof.retrieval import CrossEncoder, Embedder
from rankproof.stats import Result

#: Why ``min_score`` is what it is (the seed's codes).
CALIBRATION_REASONS: tuple[str, ...] = ("calibrated", "no_positive_cases",
                                        "no_abstention_cases", "no_cases")
#: Version of the calibration file layout.
CALIBRATION_SCHEMA_VERSION = 1
_SUFFIX = ".calibration.json"
# Identity keys that do not decide whether a floor still applies: a catalogue's display name
# and its size (the digest already covers its content).
_COSMETIC_KEYS = frozenset({"catalog", "size"})
_IDENTITY_LABELS = {"kind": "searcher kind", "digest": "catalogue digest", "mode": "mode",
                    "embedder": "embedder model", "rerank": "reranker",
                    "callable": "callable", "version": "callable version"}


@dataclass(frozen=True)
class MinScoreCalibration(Result):
    """A calibrated absolute abstention floor for one searcher (catalogue + mode, or callable).

    ``min_score`` is the floor to give a conservative selector (``None``
    when one of the two query classes was missing: see ``reason``; the
    selector then never abstains by absolute score). ``sensitivity``,
    ``specificity``, ``youden_j``, ``balanced_accuracy`` and ``objective``
    describe the rule ``top >= min_score -> commit`` on the calibration cases
    (``None`` where a class is missing, and without a floor: sensitivity 1,
    specificity = the share of abstention cases with nothing retrieved).
    ``separable``: some floor reaches J = 1. ``positive_scores`` /
    ``abstention_scores``: ``{n, min, median, max}`` of each class's top
    scores (``None`` for an empty class), the raw values in
    ``positive_raw_scores`` / ``abstention_raw_scores`` (case order).
    ``grid``: every candidate floor with ``{min_score, sensitivity,
    specificity, youden_j, objective}``. ``n_retrieval_miss`` gold cases
    were excluded (ids in ``retrieval_miss_ids``); ``n_abstention_empty``
    abstention cases retrieved nothing. ``identity`` is the searcher's stamp
    checked on load; ``catalog_path`` is where the default file goes.
    """

    corpus_name: str
    mode: str
    k: int
    min_score: float | None
    sensitivity: float | None
    specificity: float | None
    youden_j: float | None
    balanced_accuracy: float | None
    separable: bool
    sensitivity_weight: float
    n_positive: int
    n_abstention: int
    n_retrieval_miss: int
    positive_scores: dict[str, float] | None
    abstention_scores: dict[str, float] | None
    grid: tuple[dict[str, float], ...]
    reason: str
    embedder_id: str | None = None
    strategy: str = "conservative"
    degraded: bool = False
    rerank: str | None = None
    objective: float | None = None
    identity: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    n_abstention_empty: int = 0
    retrieval_miss_ids: tuple[str, ...] = ()
    positive_raw_scores: tuple[float, ...] = ()
    abstention_raw_scores: tuple[float, ...] = ()
    catalog_path: str | None = None
    schema_version: int = CALIBRATION_SCHEMA_VERSION

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MinScoreCalibration:
        """The inverse of `to_dict`; optional fields may be absent (their defaults apply).

        Every field is type-checked: a bad one is an `InputError` naming it.
        """
        return _from_dict(d)

    def default_path(self) -> Path:
        """Where `save` writes without a path: beside the catalogue, named by it and the mode."""
        if self.catalog_path is None:
            what = "a callable searcher" if self.identity.get("kind") == "callable" \
                else f"catalogue {self.corpus_name!r} (built in memory)"
            raise ConfigError(f"{what} has no file to keep the calibration beside: give a path")
        return default_calibration_path(self.catalog_path, self.corpus_name, self.mode,
                                        self.rerank)

    def save(self, path: PathLike | None = None) -> Path:
        """Write this calibration as JSON (atomically) to ``path`` or `default_path`; the path."""
        target = Path(path) if path is not None else self.default_path()
        text = json.dumps(self.to_dict(), indent=2, allow_nan=False, ensure_ascii=False)
        with atomic_write(target) as out:
            out.write(text + "\n")
        return target

    @classmethod
    def load(cls, path: PathLike, expect: Searcher | Mapping[str, Any] | None = None
             ) -> MinScoreCalibration:
        """Read a calibration file; with ``expect``, refuse one stamped for another searcher.

        ``expect`` is the searcher the floor is about to be used with (or its
        ``identity``). A differing stamp is a `ConfigError` that names what
        changed (catalogue digest, mode, embedder model, callable version);
        a malformed file is an `InputError` naming the file and the field.
        """
        p = Path(path)
        try:
            raw = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError("no such calibration file", path=str(p)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the calibration: {exc}", path=str(p)) from None
        data = parse_document(raw, str(p), what="calibration")  # bounded: depth, size, keys
        try:
            calib = _from_dict(data)
        except InputError as exc:
            raise InputError(exc.reason, path=str(p), field=exc.field) from None
        if expect is not None:
            calib.check_identity(expect, source=str(p))
        return calib

    def check_identity(self, expect: Searcher | Mapping[str, Any], *, source: str = "calibration"
                       ) -> None:
        """Refuse (`ConfigError`) when this floor was calibrated for another searcher."""
        current = dict(expect) if isinstance(expect, Mapping) else dict(expect.identity)
        changes = identity_changes(self.identity, current)
        if changes:
            raise ConfigError(f"{source}: stale calibration, refused (a floor is only valid for "
                              f"the searcher it was calibrated on): {'; '.join(changes)}. "
                              "Recalibrate (calibrate_min_score, or rankproof discover "
                              "--calibrate).")


def identity_changes(stamped: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """What differs between a calibration's stamp and the current searcher, in words."""
    keys = sorted((set(stamped) | set(current)) - _COSMETIC_KEYS)
    out = []
    for key in keys:
        was, now = stamped.get(key), current.get(key)
        if was != now:
            label = _IDENTITY_LABELS.get(key, key)
            out.append(f"{label} changed ({_short(was)} -> {_short(now)})")
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:28] + "..." + text[-8:]


def default_calibration_path(catalog_path: PathLike, name: str, mode: str,
                             rerank: str | None = None) -> Path:
    """``<folder of the catalogue>/<name>.<mode>[-rerank].calibration.json``.

    The name is reduced to one safe path component, so a catalogue name can
    never point the file elsewhere.
    """
    folder = Path(catalog_path).resolve().parent
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-") or "catalog"
    tag = re.sub(r"[^A-Za-z0-9_-]+", "-", mode) + ("-rerank" if rerank else "")
    return folder / f"{stem}.{tag}{_SUFFIX}"


# --------------------------------------------------------------------------- computation


@dataclass(frozen=True)
class _Classes:
    positives: tuple[float, ...]
    abstentions: tuple[float, ...]
    n_abstention: int
    miss_ids: tuple[str, ...]


def _split(cases: Sequence[DiscoveryCase], rankings: Sequence[Ranking], k: int) -> _Classes:
    positives: list[float] = []
    abstentions: list[float] = []
    misses: list[str] = []
    n_abst = 0
    for i, (case, ranking) in enumerate(zip(cases, rankings, strict=True)):
        top = ranking[:k]
        if case.gold_is_none:
            n_abst += 1
            if top:
                abstentions.append(float(top[0][1]))
        elif any(doc in case.gold for doc, _ in top):
            positives.append(float(top[0][1]))
        else:
            misses.append(case_id(i))
    return _Classes(tuple(positives), tuple(abstentions), n_abst, tuple(misses))


def _candidate_floors(values: Sequence[float]) -> list[float]:
    """Midpoints between adjacent distinct values, the lowest value, and just above the highest."""
    uniq = sorted(set(values))
    floors = [uniq[0]]
    for lo, hi in itertools.pairwise(uniq):
        mid = lo + (hi - lo) / 2
        floors.append(mid if lo < mid <= hi else hi)
    floors.append(math.nextafter(uniq[-1], math.inf))
    return floors


def _summary(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    arr = np.asarray(values, dtype=np.float64)
    return {"n": len(values), "min": float(arr.min()), "median": float(np.median(arr)),
            "max": float(arr.max())}


def _check_weight(w: Any) -> float:
    if isinstance(w, bool) or not isinstance(w, int | float) or not 0.0 <= float(w) <= 1.0:
        raise InputError(f"sensitivity_weight must be a number in [0, 1], got {w!r}",
                         field="sensitivity_weight")
    return float(w)


def _check_grid(grid: Any) -> list[float] | None:
    if grid is None:
        return None
    if isinstance(grid, str | bytes) or not isinstance(grid, Sequence) or not grid:
        raise InputError(f"floor_grid must be a non-empty list of numbers, got {grid!r}",
                         field="floor_grid")
    for g in grid:
        if isinstance(g, bool) or not isinstance(g, int | float) or not math.isfinite(g):
            raise InputError(f"floor_grid holds {g!r}; floors are finite numbers",
                             field="floor_grid")
    return sorted({float(g) for g in grid})


def calibrate_from_rankings(
    cases: Sequence[DiscoveryCase],
    rankings: Sequence[Ranking],
    *,
    k: int = 10,
    sensitivity_weight: float = DFLT_CALIB_SENSITIVITY_WEIGHT,
    floor_grid: Sequence[float] | None = None,
    mode: str = "precomputed",
    identity: Mapping[str, Any] | None = None,
    degraded: bool = False,
    notes: Sequence[str] = (),
    catalog_path: str | None = None,
) -> MinScoreCalibration:
    """`calibrate_min_score` over rankings already retrieved (one per case, best first).

    Searches nothing: the stamps (``mode``, ``identity``, ``degraded``,
    ``notes``, ``catalog_path``) describe where the rankings came from.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}", field="k")
    w = _check_weight(sensitivity_weight)
    grid_given = _check_grid(floor_grid)
    if len(rankings) != len(cases):
        raise InputError(f"{len(rankings)} ranking(s) for {len(cases)} case(s); give one "
                         "ranking per case, in case order")
    ident = dict(identity or {})
    classes = _split(cases, rankings, k)
    pos = np.sort(np.asarray(classes.positives, dtype=np.float64))
    abst = np.sort(np.asarray(classes.abstentions, dtype=np.float64))
    n_pos, n_abs = len(pos), classes.n_abstention
    n_empty = n_abs - len(abst)
    out_notes = list(notes)
    if classes.miss_ids:
        out_notes.append(f"{len(classes.miss_ids)} gold case(s) excluded: their gold was not "
                         f"in the top {k} (retrieval misses, not an abstention signal)")
    if n_empty:
        out_notes.append(f"{n_empty} abstention case(s) retrieved nothing: refused at any floor")

    def rates(floor: float) -> tuple[Fraction | None, Fraction | None]:
        kept = n_pos - int(np.searchsorted(pos, floor, side="left"))
        refused = int(np.searchsorted(abst, floor, side="left")) + n_empty
        return (Fraction(kept, n_pos) if n_pos else None,
                Fraction(refused, n_abs) if n_abs else None)

    reason = ("no_cases" if not n_pos and not n_abs else "no_positive_cases" if not n_pos
              else "no_abstention_cases" if not n_abs else "calibrated")
    floor: float | None = None
    grid: list[dict[str, float]] = []
    objective = j_best = None
    if reason == "calibrated":
        wq = Fraction(w)
        candidates = grid_given if grid_given is not None else _candidate_floors(
            [*classes.positives, *classes.abstentions])
        best: tuple[Fraction, Fraction, float] | None = None
        for cand in candidates:
            sens, spec = rates(cand)
            assert sens is not None and spec is not None
            obj, j = wq * sens + (1 - wq) * spec, sens + spec - 1
            grid.append({"min_score": cand, "sensitivity": float(sens),
                         "specificity": float(spec), "youden_j": float(j),
                         "objective": float(obj)})
            if best is None or (obj, j, cand) > best:  # ties: larger J, then the higher floor
                best = (obj, j, cand)
        assert best is not None
        objective, j_best, floor = float(best[0]), float(best[1]), best[2]
        if best[1] <= 0:
            out_notes.append("no floor separates in-scope from out-of-scope queries better "
                             "than chance (Youden's J <= 0)")
    sens_f, spec_f = rates(floor if floor is not None else -math.inf)
    separable = bool(n_pos and n_abs and (not len(abst) or pos[0] > abst[-1]))
    youden = balanced = None
    if sens_f is not None and spec_f is not None:
        youden, balanced = float(sens_f + spec_f - 1), float((sens_f + spec_f) / 2)
    return MinScoreCalibration(
        corpus_name=str(ident.get("catalog") or ident.get("callable") or "rankings"),
        mode=mode, k=k, min_score=floor,
        sensitivity=None if sens_f is None else float(sens_f),
        specificity=None if spec_f is None else float(spec_f),
        youden_j=youden, balanced_accuracy=balanced,
        separable=separable, sensitivity_weight=w, n_positive=n_pos, n_abstention=n_abs,
        n_retrieval_miss=len(classes.miss_ids), positive_scores=_summary(classes.positives),
        abstention_scores=_summary(classes.abstentions), grid=tuple(grid), reason=reason,
        embedder_id=ident.get("embedder"), degraded=degraded, rerank=ident.get("rerank"),
        objective=objective if j_best is not None else None, identity=ident,
        notes=tuple(out_notes), n_abstention_empty=n_empty,
        retrieval_miss_ids=classes.miss_ids, positive_raw_scores=classes.positives,
        abstention_raw_scores=classes.abstentions, catalog_path=catalog_path)


def _catalog_path(searcher: Searcher) -> str | None:
    if isinstance(searcher, CatalogSearcher) and searcher.catalog.path is not None:
        return searcher.catalog.path
    return None


def calibrate_min_score(
    source: Any,
    cases: Sequence[DiscoveryCase],
    *,
    mode: str = DFLT_MODE,
    k: int = 10,
    sensitivity_weight: float = DFLT_CALIB_SENSITIVITY_WEIGHT,
    floor_grid: Sequence[float] | None = None,
    persist: bool = False,
    path: PathLike | None = None,
    embedder: Embedder | None = None,
    rerank: CrossEncoder | None = None,
    search: SearchSettings | Mapping[str, Any] | None = None,
) -> MinScoreCalibration:
    """Calibrate the abstention floor ``min_score`` for one searcher (see the module notes).

    Retrieves the top ``k`` of every case **once**, then separates the top
    scores of in-scope cases (gold retrieved) from those of abstention
    cases. ``cases`` should hold both kinds; with one kind missing the floor
    is ``None`` and ``reason`` says which. ``persist=True`` saves the result
    (to ``path``, or beside the catalogue: `MinScoreCalibration.default_path`)
    — checked before anything is searched, so a floor that could not be
    kept is not computed.
    """
    searcher = as_searcher(source, mode=mode, embedder=embedder, rerank=rerank, search=search)
    cases = list(cases)
    for i, c in enumerate(cases):
        if not isinstance(c, DiscoveryCase):
            raise InputError(f"case {i} is a {type(c).__name__}, expected a DiscoveryCase")
    _check_weight(sensitivity_weight)
    _check_grid(floor_grid)
    if searcher.ids is not None:
        check_cases(searcher.ids, cases)
    catalog_path = _catalog_path(searcher)
    if persist and path is None and catalog_path is None:
        raise ConfigError("persist=True needs a place for the file: this searcher has no "
                          "catalogue file beside which to keep it; give path=")
    rankings = retrieve(searcher, [c.query for c in cases], k) if cases else []
    calib = calibrate_from_rankings(
        cases, rankings, k=k, sensitivity_weight=sensitivity_weight, floor_grid=floor_grid,
        mode=searcher.mode, identity=searcher.identity, degraded=searcher.degraded,
        notes=searcher.notes, catalog_path=catalog_path)
    if persist:
        calib.save(path)
    return calib


def load_calibration(
    path_or_source: Any,
    *,
    mode: str = DFLT_MODE,
    identity: Searcher | Mapping[str, Any] | None = None,
    embedder: Embedder | None = None,
    rerank: CrossEncoder | None = None,
    path: PathLike | None = None,
    search: SearchSettings | Mapping[str, Any] | None = None,
) -> MinScoreCalibration | None:
    """The stored floor for a searcher, checked against it; ``None`` when none was stored.

    Given a source (a catalogue, its path, a searcher, a callable), the
    searcher is built as `calibrate_min_score` builds it (``mode``,
    ``embedder``, ``rerank``) and its calibration read from ``path`` or the
    default file beside the catalogue. Given a ``.json`` calibration file,
    ``identity`` (the searcher, or its identity) is required: a floor is
    never handed out unchecked. A stamp that differs is a `ConfigError`.
    """
    if isinstance(path_or_source, str | Path) and str(path_or_source).endswith(".json"):
        if identity is None:
            raise ConfigError(f"{path_or_source}: say which searcher the floor is for "
                              "(identity= a Searcher or its identity): a calibration is only "
                              "used after checking it was made for that searcher")
        return MinScoreCalibration.load(path_or_source, expect=identity)
    searcher = as_searcher(path_or_source, mode=mode, embedder=embedder, rerank=rerank,
                           search=search)
    if path is None:
        catalog_path = _catalog_path(searcher)
        if catalog_path is None:
            raise ConfigError("this searcher has no catalogue file to find a calibration "
                              "beside: give path=")
        ident = searcher.identity
        target = default_calibration_path(catalog_path, str(ident.get("catalog") or "catalog"),
                                          searcher.mode, ident.get("rerank"))
    else:
        target = Path(path)
    if not target.is_file():
        return None
    return MinScoreCalibration.load(target, expect=identity if identity is not None
                                    else searcher)


# --------------------------------------------------------------------------- reading


def _num(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v)


def _int(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int) and v >= 0


_GRID_KEYS = frozenset({"min_score", "sensitivity", "specificity", "youden_j", "objective"})
_str = (lambda v: isinstance(v, str), "a string")
_opt_str = (lambda v: v is None or isinstance(v, str), "a string or null")
_opt_num = (lambda v: v is None or _num(v), "a number or null")
_count = (_int, "a non-negative integer")
_flag = (lambda v: isinstance(v, bool), "true or false")
_summary_ok = (lambda v: v is None or (isinstance(v, dict) and {"min", "median", "max"} <= set(v)
                                       and all(_num(x) for x in v.values())),
               "null or {min, median, max}")
_strs = (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
         "a list of strings")
_nums = (lambda v: isinstance(v, list) and all(_num(x) for x in v), "a list of numbers")
_grid_ok = (lambda v: isinstance(v, list) and all(
    isinstance(g, dict) and set(g) >= _GRID_KEYS and all(_num(g[x]) for x in _GRID_KEYS)
    for g in v), "a list of {min_score, sensitivity, specificity, youden_j, objective}")

# field -> (check, what it should be, required)
_FIELDS: dict[str, tuple[tuple[Any, str], bool]] = {
    "corpus_name": (_str, True), "mode": (_str, True),
    "k": ((lambda v: _int(v) and v >= 1, "a positive integer"), True),
    "min_score": (_opt_num, True), "sensitivity": (_opt_num, False),
    "specificity": (_opt_num, False), "youden_j": (_opt_num, False),
    "balanced_accuracy": (_opt_num, False), "separable": (_flag, False),
    "sensitivity_weight": ((lambda v: _num(v) and 0 <= v <= 1, "a number in [0, 1]"), True),
    "n_positive": (_count, True), "n_abstention": (_count, True),
    "n_retrieval_miss": (_count, True), "positive_scores": (_summary_ok, False),
    "abstention_scores": (_summary_ok, False), "grid": (_grid_ok, False),
    "reason": ((lambda v: v in CALIBRATION_REASONS,
                f"one of {', '.join(CALIBRATION_REASONS)}"), True),
    "embedder_id": (_opt_str, False), "strategy": (_str, False), "degraded": (_flag, False),
    "rerank": (_opt_str, False), "objective": (_opt_num, False),
    "identity": ((lambda v: isinstance(v, dict) and bool(v),
                  "a non-empty object (the searcher the floor was calibrated on)"), True),
    "notes": (_strs, False), "n_abstention_empty": (_count, False),
    "retrieval_miss_ids": (_strs, False), "positive_raw_scores": (_nums, False),
    "abstention_raw_scores": (_nums, False), "catalog_path": (_opt_str, False),
    "schema_version": ((lambda v: v == CALIBRATION_SCHEMA_VERSION,
                        f"{CALIBRATION_SCHEMA_VERSION} (the version this rankproof reads)"),
                       False),
}
_TUPLES = ("grid", "notes", "retrieval_miss_ids", "positive_raw_scores",
           "abstention_raw_scores")
_LEGACY = {"vd_degraded": "degraded"}  # the seed's name for the same flag


def _from_dict(d: Any) -> MinScoreCalibration:
    if not isinstance(d, Mapping):
        raise InputError(f"a calibration is a JSON object, got {type(d).__name__}")
    data: dict[str, Any] = {_LEGACY.get(str(k), str(k)): v for k, v in d.items()}
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise InputError(f"unknown field(s) {', '.join(map(repr, unknown))}", field=unknown[0])
    for name, ((check, what), required) in _FIELDS.items():
        if name not in data:
            if required:
                raise InputError(f"missing; a calibration needs {name} ({what})", field=name)
            continue
        if not check(data[name]):
            raise InputError(f"expected {what}, got {_short(data[name])}", field=name)
    if data["reason"] == "calibrated" and data["min_score"] is None:
        raise InputError("reason is 'calibrated' but min_score is null", field="min_score")
    if data["reason"] != "calibrated" and data["min_score"] is not None:
        raise InputError(f"reason is {data['reason']!r} but a min_score is given",
                         field="min_score")
    kwargs: dict[str, Any] = {k: tuple(v) if k in _TUPLES else v for k, v in data.items()}
    kwargs.setdefault("separable", False)
    for name in ("sensitivity", "specificity", "youden_j", "balanced_accuracy",
                 "positive_scores", "abstention_scores"):
        kwargs.setdefault(name, None)
    kwargs.setdefault("grid", ())
    for name in ("min_score", "sensitivity", "specificity", "youden_j", "balanced_accuracy",
                 "sensitivity_weight", "objective"):
        if kwargs.get(name) is not None:
            kwargs[name] = float(kwargs[name])
    return MinScoreCalibration(**kwargs)
