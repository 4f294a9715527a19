"""The checks file: what a gate asserts, validated completely before anything runs.

.. code-block:: yaml

    checks:
      - id: quality_floor
        metric: nDCG@10
        op: ">="
        threshold: 0.80
      - id: no_quality_regression
        metric: nDCG@10
        vs_baseline: no_significant_regression
        alpha: 0.05          # optional, default 0.05
      - id: controls_hold
        metric: RR@10
        op: ">="
        threshold: 1.0
        scope: [control-1, control-2]
        level: warn          # block (default) or warn

Each check has ``id``, ``metric`` and exactly one of two forms: a threshold
(``op`` in ``<=``, ``>=``, ``==`` with ``threshold``) or a baseline
comparison, optional ``alpha``: ``vs_baseline: no_significant_regression``
(fails only when the run is significantly worse), or the stricter
non-inferiority rule ``vs_baseline: {no_regression_beyond: 0.01}``, which
passes only when the one-sided interval's bound clears the margin — the
lower bound above ``−0.01`` for a higher-is-better metric, the upper bound
below ``+0.01`` for latency-like ones — at the gate's corrected level. Absence
of evidence of a regression is not evidence of its absence; this rule asks
for the evidence.

**Metric names are resolved when the gate runs** (`resolve_checks`, called
by `run_gate` and `evaluate_target` before anything is computed), not when
the file loads: a checks file may name a metric that is registered after it
is read — by the caller's code, or by ``rankproof gate --plugin MODULE``. A
name that is still unknown then is a `ConfigError` naming the check, its
line, the closest known name and every known name. A name that already
resolves at load time is stored in canonical form (``ndcg@10`` →
``nDCG@10``), and one that does not is kept as written.

``metric`` may name one of trec_eval's measure sets (``official``,
``all_trec``) in a baseline check: the check becomes one check per member
measure, with ids ``ID/measure`` (``no_regress/P@10``, canonical measure
names, trec_eval's order), each keeping the check's ``alpha``, ``scope``
and ``level``; they are corrected together with the file's other baseline
checks. A threshold check on a set is refused: one threshold cannot mean
the same thing for a precision and a count of retrieved documents.

Optional top-level keys, the statistics settings of the baseline checks
(`rankproof.stats.StatSettings`, defaults named once in ``rankproof.stats``):
``test`` (``randomization``, default; ``t``, ``bootstrap``, ``wilcoxon``, ``sign``),
``seed`` (default 0), ``resamples`` (default 10 000; at least 100 here) and
``correction`` (``holm``, default; ``bh``, ``bonferroni``, ``none``) across the
file's baseline checks. ``rankproof gate --test/--seed/--resamples/--correction``
override them.

A gate that silently ignores a line is worse than no gate, so the file is
refused — with the check id, the field and the line — for: invalid YAML, a
repeated key, unknown keys (with the closest known key suggested), both
forms or neither, ``op`` without ``threshold`` or the reverse, ``alpha`` on
a threshold check, duplicate ids, zero checks, an empty or repeated
``scope``, scope ids not in ``known_case_ids`` (when given), an empty
metric name, a threshold on a measure set, and ``vs_baseline`` on a
run-level aggregate (a single number per run cannot be paired case by case;
checked at load when the name is already known, and again when the gate
runs). Every refusal is a `ConfigError`; all problems found are reported at
once.

``==`` compares with ``math.isclose(rel_tol=1e-9, abs_tol=1e-12)``: exact
float equality would fail on rounding noise, and a configurable tolerance
would let a check be loosened without looking like a change of threshold.
"""

from __future__ import annotations

import contextlib
import difflib
import math
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from rankproof._errors import ConfigError, InputError
from rankproof._limits import shown
from rankproof.comparison import family_cost
from rankproof.data import YamlBoundError, load_lined_yaml, read_config_text
from rankproof.measures import MetricDef, families, is_set, lookup, registered, resolve
from rankproof.stats import (
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TEST,
    Correction,
    StatSettings,
    TestName,
)

Op = Literal["<=", ">=", "=="]
Level = Literal["block", "warn"]

REL_TOL = 1e-9
MIN_RESAMPLES = 100
"""A gate decides merges: fewer resamples than this make its p-values too coarse to trust."""
ABS_TOL = 1e-12

CHECK_KEYS = ("id", "metric", "op", "threshold", "vs_baseline", "alpha", "level", "scope",
              "judge_calibration", "kappa_floor")
TOP_KEYS = ("checks", "test", "seed", "resamples", "correction")


class NonInferiority(BaseModel):
    """``vs_baseline: {no_regression_beyond: MARGIN}``: pass only when a regression larger
    than ``MARGIN`` (in the metric's units) is ruled out."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    no_regression_beyond: float = Field(strict=False, gt=0.0, allow_inf_nan=False)


class Check(BaseModel):
    """One check of a checks file (validated; ``metric`` is the canonical metric name)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(strict=True, min_length=1)
    metric: str = Field(strict=True, min_length=1)
    op: Op | None = None
    threshold: float | None = Field(default=None, strict=True, allow_inf_nan=False)
    vs_baseline: Literal["no_significant_regression"] | NonInferiority | None = None
    alpha: float | None = Field(default=None, strict=True, gt=0.0, lt=1.0)
    level: Level = "block"
    scope: tuple[str, ...] | None = Field(default=None, strict=True)
    judge_calibration: str | None = Field(default=None, strict=True, min_length=1)
    """A judge-backed check: the calibration file of the judge whose scores it reads
    (relative to the checks file). It blocks only when that calibration is for the very
    judge that scored the run and its κ is at least ``kappa_floor``; otherwise it is advisory
    (reported as a warning that says why)."""
    kappa_floor: float | None = Field(default=None, strict=False, ge=-1.0, le=1.0,
                                      allow_inf_nan=False)
    line: int | None = Field(default=None, exclude=True)
    """Line of the check in its file (for messages), when read from YAML."""
    metric_line: int | None = Field(default=None, exclude=True)
    """Line of its ``metric`` key, for the message of a name unknown when the gate runs."""

    @field_validator("vs_baseline", mode="before")
    @classmethod
    def _rule(cls, value: Any) -> Any:
        """One clear message for a wrong rule, instead of one per form of the union."""
        if value is None or value == "no_significant_regression" \
                or isinstance(value, NonInferiority):
            return value
        if isinstance(value, Mapping):
            if set(value) != {"no_regression_beyond"}:
                raise ValueError(f"expected {{no_regression_beyond: MARGIN}}, got the key(s) "
                                 f"{', '.join(shown(k) for k in value)}")
            margin = value["no_regression_beyond"]
            if isinstance(margin, bool) or not isinstance(margin, int | float) \
                    or not math.isfinite(margin) or margin <= 0:
                raise ValueError("no_regression_beyond must be a positive number (the largest "
                                 f"regression to tolerate, in the metric's units), got "
                                 f"{shown(margin)}")
            return NonInferiority(no_regression_beyond=float(margin))
        raise ValueError("expected 'no_significant_regression' or {no_regression_beyond: "
                         f"MARGIN}}, got {shown(value)}")

    @model_validator(mode="after")
    def _one_form(self) -> Check:
        threshold_form = self.op is not None or self.threshold is not None
        if threshold_form and self.vs_baseline is not None:
            raise ValueError("give either op + threshold or vs_baseline, not both")
        if not threshold_form and self.vs_baseline is None:
            raise ValueError("give either op + threshold (e.g. op: '>=', threshold: 0.8) or "
                             "vs_baseline: no_significant_regression (or vs_baseline: "
                             "{no_regression_beyond: MARGIN})")
        if self.op is not None and self.threshold is None:
            raise ValueError(f"op {self.op!r} needs a threshold")
        if self.threshold is not None and self.op is None:
            raise ValueError("threshold needs an op ('<=', '>=' or '==')")
        if (self.judge_calibration is None) != (self.kappa_floor is None):
            raise ValueError("a judge-backed check gives both judge_calibration and "
                             "kappa_floor")
        if self.alpha is not None and self.vs_baseline is None:
            raise ValueError("alpha only applies to vs_baseline checks; a threshold check has "
                             "no significance level")
        if self.scope is not None:
            if not self.scope:
                raise ValueError("scope is empty; omit it to check every case")
            repeated = sorted({c for c in self.scope if self.scope.count(c) > 1})
            if repeated:
                raise ValueError(f"scope lists {', '.join(map(repr, repeated))} more than once")
            if any(not c for c in self.scope):
                raise ValueError("scope holds an empty case id")
        return self

    @property
    def kind(self) -> Literal["threshold", "vs_baseline"]:
        return "threshold" if self.vs_baseline is None else "vs_baseline"

    @property
    def margin(self) -> float | None:
        """The non-inferiority margin of a ``no_regression_beyond`` check, else None."""
        return (self.vs_baseline.no_regression_beyond
                if isinstance(self.vs_baseline, NonInferiority) else None)

    @property
    def effective_alpha(self) -> float:
        return DEFAULT_ALPHA if self.alpha is None else self.alpha

    def holds(self, value: float) -> bool:
        """Whether ``value`` satisfies a threshold check (``==`` with the fixed tolerance)."""
        if self.op is None or self.threshold is None:
            raise TypeError(f"check {self.id!r} is not a threshold check")
        if self.op == "<=":
            return value <= self.threshold
        if self.op == ">=":
            return value >= self.threshold
        return math.isclose(value, self.threshold, rel_tol=REL_TOL, abs_tol=ABS_TOL)


class ChecksFile(BaseModel):
    """A validated checks file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    checks: tuple[Check, ...]
    test: TestName = DEFAULT_TEST
    seed: int = Field(default=DEFAULT_SEED, strict=True, ge=0)
    resamples: int = Field(default=DEFAULT_RESAMPLES, strict=True, ge=MIN_RESAMPLES)
    correction: Correction = DEFAULT_CORRECTION
    source: str | None = Field(default=None, exclude=True)

    @property
    def stats(self) -> StatSettings:
        """The baseline checks' settings (each check's own ``alpha`` overrides the level)."""
        return StatSettings(test=self.test, correction=self.correction,
                            resamples=self.resamples, seed=self.seed)

    def with_stats(self, *, test: str | None = None, correction: str | None = None,
                   resamples: int | None = None, seed: int | None = None,
                   alpha: float | None = None) -> ChecksFile:
        """A copy with the given statistics settings in place of the file's (``rankproof
        gate --test/--correction/--resamples/--seed/--alpha``; None keeps the file's),
        checked as the file's own keys are: `InputError` naming the setting, `ConfigError`
        for fewer than `MIN_RESAMPLES` resamples or a cost over the bounds. ``alpha`` is the
        level of every baseline check that sets no ``alpha`` of its own."""
        given = {k: v for k, v in (("test", test), ("correction", correction),
                                   ("resamples", resamples), ("seed", seed)) if v is not None}
        if alpha is not None:
            self.stats.replace(alpha=alpha)  # refused as StatSettings refuses it
            checks = tuple(c.model_copy(update={"alpha": alpha})
                           if c.kind == "vs_baseline" and c.alpha is None else c
                           for c in self.checks)
            return self.model_copy(update={"checks": checks}).with_stats(
                test=test, correction=correction, resamples=resamples, seed=seed)
        if not given:
            return self
        stats = self.stats.replace(**given)
        if stats.resamples < MIN_RESAMPLES:
            raise ConfigError(f"resamples must be at least {MIN_RESAMPLES} for a gate; got "
                              f"{stats.resamples}")
        if self.needs_baseline:
            family_cost([1] * sum(c.kind == "vs_baseline" for c in self.checks),
                        test=stats.test, resamples=stats.resamples,
                        what="the baseline checks", error=ConfigError)
        return self.model_copy(update={k: getattr(stats, k) for k in given})

    @property
    def needs_baseline(self) -> bool:
        return any(c.kind == "vs_baseline" for c in self.checks)

    def check(self, check_id: str) -> Check:
        for c in self.checks:
            if c.id == check_id:
                return c
        raise KeyError(f"no check {check_id!r}")


def _suggest(key: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _where(source: str, line: int | None) -> str:
    return f"{source}, line {line}" if line else source


def _pydantic_problems(exc: ValidationError) -> list[tuple[str, str]]:
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        out.append((loc, msg))
    return out


def parse_checks(
    text: str,
    *,
    source: str = "<checks>",
    known_case_ids: Collection[str] | None = None,
) -> ChecksFile:
    """Validate checks from YAML text; see the module docstring for every rule."""
    try:
        # Bounded (nesting, alias expansion, integer length) before anything is
        # constructed; a repeated key is refused at its line too.
        data = load_lined_yaml(text)
    except YamlBoundError as exc:
        where = _where(source, exc.line)
        at = f"field '{exc.field}': " if exc.field else ""
        raise ConfigError(f"{where}: {at}{exc.message}") from None
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{source}{where}: invalid YAML: {problem}") from None
    if not isinstance(data, Mapping):
        found = "an empty file" if data is None else f"a {type(data).__name__}"
        raise ConfigError(f"{source}: expected a mapping with a 'checks' list, found {found}")
    problems: list[str] = []
    top_lines = getattr(data, "key_lines", {})
    for key in data:
        if key not in TOP_KEYS:
            problems.append(f"{_where(source, top_lines.get(key))}: unknown top-level key "
                            f"{shown(key)}{_suggest(key, TOP_KEYS)}; allowed: "
                            f"{', '.join(TOP_KEYS)}")
    raw_checks = data.get("checks")
    if "checks" not in data:
        problems.append(f"{source}: missing the 'checks' list")
    elif raw_checks is None or raw_checks == []:
        problems.append(f"{_where(source, top_lines.get('checks'))}: the file has zero checks; "
                        "a gate with nothing to check would always pass")
    elif not isinstance(raw_checks, list):
        problems.append(f"{_where(source, top_lines.get('checks'))}: 'checks' must be a list "
                        f"of checks, found {type(raw_checks).__name__}")
        raw_checks = None
    checks: list[Check] = []
    seen_ids: dict[str, int | None] = {}
    for i, raw in enumerate(raw_checks or []):
        line = getattr(raw, "line", None)
        label = f"check {i + 1}"
        if isinstance(raw, Mapping) and isinstance(raw.get("id"), str) and raw["id"]:
            label = f"check {shown(raw['id'])}"
        where = f"{_where(source, line)}: {label}"
        if not isinstance(raw, Mapping):
            problems.append(f"{where}: expected a mapping (id, metric, ...), found "
                            f"{type(raw).__name__}")
            continue
        key_lines = getattr(raw, "key_lines", {})
        ok = True
        for k in raw:
            if k not in CHECK_KEYS:
                ok = False
                problems.append(f"{_where(source, key_lines.get(k, line))}: {label}: unknown "
                                f"key {shown(k)}{_suggest(k, CHECK_KEYS)}; allowed: "
                                f"{', '.join(CHECK_KEYS)}")
        raw_id = raw.get("id")
        if isinstance(raw_id, str) and raw_id:
            if raw_id in seen_ids:
                ok = False
                first = seen_ids[raw_id]
                problems.append(f"{where}: duplicate id {shown(raw_id)} (first used at "
                                f"{'line ' + str(first) if first else 'an earlier check'}); "
                                "ids name verdicts and JUnit test cases, so they must be unique")
            else:
                seen_ids[raw_id] = line
        definition = None
        members: tuple[MetricDef, ...] | None = None  # a trec_eval set's measures
        raw_metric = raw.get("metric")
        if isinstance(raw_metric, str) and raw_metric.strip():
            if is_set(raw_metric):  # sets are fixed by trec_eval: expanded now
                members = resolve([raw_metric])
            else:
                # unknown now, it may be registered later: `resolve_checks` decides at run time
                with contextlib.suppress(InputError):
                    definition = lookup(raw_metric)
        elif isinstance(raw_metric, str):
            ok = False
            problems.append(f"{_where(source, key_lines.get('metric', line))}: {label}: "
                            "field 'metric': empty metric name")
        if any(k not in CHECK_KEYS for k in raw):
            continue  # the other rules would only echo the typo ("op needs a threshold")
        fields = dict(raw)
        if isinstance(fields.get("scope"), list):
            fields["scope"] = tuple(fields["scope"])
        try:
            check = Check.model_validate({**fields, "line": line,
                                          "metric_line": key_lines.get("metric", line)})
        except ValidationError as exc:
            for loc, msg in _pydantic_problems(exc):
                at = f"field {loc!r}: " if loc else ""
                hint = " (quote it)" if loc == "id" and isinstance(raw_id, int | float) else ""
                problems.append(f"{_where(source, key_lines.get(loc, line))}: {label}: "
                                f"{at}{msg}{hint}")
            continue
        if not ok:
            continue
        if members is not None and check.kind == "threshold":
            problems.append(
                f"{_where(source, key_lines.get('metric', line))}: {label}: field 'metric': "
                f"{check.metric!r} is trec_eval's set of {len(members)} measures, and one "
                f"threshold cannot apply to all of them; name one measure per threshold check "
                f"(e.g. {members[-1].name}), or use vs_baseline, which accepts a set")
            continue
        if definition is not None and check.kind == "vs_baseline" and not definition.per_case:
            problems.append(f"{where}: {_aggregate_vs_baseline(definition)}")
            continue
        if known_case_ids is not None and check.scope is not None:
            known = set(known_case_ids)
            absent = [c for c in check.scope if c not in known]
            if absent:
                problems.append(f"{_where(source, key_lines.get('scope', line))}: {label}: "
                                f"field 'scope': case id(s) {', '.join(map(shown, absent))} are "
                                "not in the golden set / report")
                continue
        if members is None:  # one metric: canonical now, or as written until the gate runs
            name = definition.name if definition is not None else check.metric.strip()
            checks.append(check.model_copy(update={"metric": name}))
            continue
        for d in members or ():
            member_id = f"{check.id}/{d.name}"
            if member_id in seen_ids:
                first = seen_ids[member_id]
                at = f"line {first}" if first else "an earlier check"
                problems.append(f"{where}: the set expands to id {shown(member_id)}, which is "
                                f"already used (at {at}); ids must be unique")
                continue
            seen_ids[member_id] = line
            checks.append(check.model_copy(update={"id": member_id, "metric": d.name}))
    settings = {k: data[k] for k in ("test", "seed", "resamples", "correction") if k in data}
    result: ChecksFile | None = None
    if not problems:
        try:
            result = ChecksFile(checks=tuple(checks), source=source, **settings)
        except ValidationError as exc:
            for loc, msg in _pydantic_problems(exc):
                problems.append(f"{_where(source, top_lines.get(loc))}: field {loc!r}: {msg}")
    if result is not None and result.needs_baseline:
        try:  # one case per check: a lower bound, before any report is read
            family_cost([1] * sum(c.kind == "vs_baseline" for c in result.checks),
                        test=result.test, resamples=result.resamples,
                        what="the baseline checks",
                        error=ConfigError)
        except ConfigError as exc:
            problems.append(f"{_where(source, top_lines.get('resamples'))}: field "
                            f"'resamples': {exc}")
    if problems or result is None:
        head = "1 problem" if len(problems) == 1 else f"{len(problems)} problems"
        raise ConfigError(f"invalid checks file ({head}):\n" + "\n".join(
            f"  - {p}" for p in problems))
    return result


def _aggregate_vs_baseline(d: MetricDef) -> str:
    return (f"field 'vs_baseline': {d.name!r} is a run-level aggregate (one number per run), "
            "so it cannot be compared case by case with a baseline; use op + threshold")


def known_metric_names() -> str:
    """Every name a check could use right now, for the message of an unknown one."""
    mark = {"required": "@k", "optional": "[@k]", "none": ""}
    retrieval = ", ".join(f"{f.name}{mark[f.cutoff]}" for f in families())
    mine = ", ".join(sorted((d.name + ("[@k]" if d.takes_cutoff else "") for d in registered()),
                            key=str.lower)) or "none"
    return (f"registered metrics and aggregates: {mine}; retrieval measures: {retrieval} "
            "(and their trec_eval spellings, e.g. ndcg_cut.10)")


def resolve_checks(checks: ChecksFile) -> ChecksFile:
    """``checks`` with every metric name resolved against the registry as it is *now*.

    Called when the gate runs, so a metric registered after the file was
    loaded is found. Returns a copy whose metrics are canonical; raises
    `ConfigError` listing every check whose metric is unknown (with its
    line, the lookup's closest match and every known name) or whose
    ``vs_baseline`` names an aggregate.
    """
    source = checks.source or "<checks>"
    problems: list[str] = []
    out: list[Check] = []
    unknown = False
    for c in checks.checks:
        label = f"check {shown(c.id)}"
        try:
            d = lookup(c.metric)
        except InputError as exc:
            unknown = True
            problems.append(f"{_where(source, c.metric_line or c.line)}: {label}: field "
                            f"'metric': {exc}")
            continue
        if c.kind == "vs_baseline" and not d.per_case:
            problems.append(f"{_where(source, c.line)}: {label}: {_aggregate_vs_baseline(d)}")
            continue
        out.append(c if d.name == c.metric else c.model_copy(update={"metric": d.name}))
    if problems:
        head = "1 problem" if len(problems) == 1 else f"{len(problems)} problems"
        tail = ""
        if unknown:
            tail = ("\nmetric names are resolved when the gate runs: register a metric before "
                    "that (from Python, or with rankproof gate --plugin MODULE). Known now: "
                    + known_metric_names())
        raise ConfigError(f"cannot run the checks ({head}):\n"
                          + "\n".join(f"  - {p}" for p in problems) + tail)
    return checks.model_copy(update={"checks": tuple(out)})


def load_checks(
    path: str | os.PathLike[str],
    *,
    known_case_ids: Collection[str] | None = None,
) -> ChecksFile:
    """Read and validate a checks file (YAML); every problem is a `ConfigError`.

    ``known_case_ids``, when given (the golden set's or report's case ids),
    lets a ``scope`` naming an absent case be refused at load time.
    """
    p = Path(path)
    text = read_config_text(p, "checks file")
    return parse_checks(text, source=str(p), known_case_ids=known_case_ids)
