"""An LLM judge that is cached, schema-checked, and advisory until calibrated.

The *model* is part of what a judged score means, so it is required and in
the cache key (a swap is a miss, never a reuse of another model's grades).
The on-disk cache is keyed only by what decides a verdict — model, rubric,
scale, prompt template, the judged input, the repeat index — never latency,
so an unchanged rerun makes no calls and ``repeat=2`` exactly one more per
case. The verdict is strict JSON ``{"score": <a label of the scale>,
"reason": "<text>"}`` checked by a pydantic schema; anything else (prose, a
code fence, a score off the scale, NaN or infinity, an extra key) is an
**error row**: kept, counted, never averaged in, never raised mid-run.
`calibrate` measures agreement with human labels (Cohen's κ), and
`JudgeCalibration.allows_blocking` lets a check block a gate only for the
judge it measured at a declared κ floor — otherwise advisory, saying why.

``scale`` is the ordered list of allowed labels: integers (``[1, 2, 3, 4,
5]``, *ordinal*: a mean is reported, κ is quadratic-weighted over positions
in the list) or strings (``["yes", "no"]``, *nominal*: no mean, plain κ).
The prompt is `PROMPT_TEMPLATE` filled with the rubric, the labels (JSON),
the query, the answer and the numbered contexts; its digest
(`PROMPT_TEMPLATE_DIGEST`) is recorded and in the cache key.
`OpenAICompatible` calls a real model; any ``call(prompt, *, model) -> str``
will do.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr, ValidationError

from rankproof._errors import InputError, RankproofError
from rankproof._io import PathLike, atomic_write, read_bytes
from rankproof._manifest import digest_json
from rankproof.data import parse_document
from rankproof.rag._answers import AnswerRow, Context
from rankproof.rag._fanout import judge_all
from rankproof.rag._openai import OpenAICompatible as OpenAICompatible
from rankproof.retrieval import default_cache_dir

if TYPE_CHECKING:
    from rankproof.engine import Executor

logger = logging.getLogger("rankproof.rag")

JUDGE_CACHE_VERSION = 1
PROMPT_TEMPLATE = (
    "You are grading an answer produced by a retrieval-augmented system.\n\n"
    "Rubric:\n{rubric}\n\n"
    "Allowed scores, in order: {scale}\n\n"
    "Question:\n{query}\n\n"
    "Retrieved passages shown to the system:\n{contexts}\n\n"
    "Answer to grade:\n{answer}\n\n"
    'Reply with exactly one JSON object and nothing else: {{"score": <one of the allowed '
    'scores>, "reason": "<one sentence>"}}'
)
PROMPT_TEMPLATE_DIGEST = "sha256:" + hashlib.sha256(PROMPT_TEMPLATE.encode()).hexdigest()

Label = int | str
JudgeCall = Callable[..., str]


def check_scale(scale: Any) -> tuple[Label, ...]:
    """``scale`` as a tuple of ≥ 2 distinct labels, all ints or all strings."""
    if isinstance(scale, str | bytes) or not isinstance(scale, Sequence):
        raise InputError(f"scale must be a list of labels, got {scale!r}", field="scale")
    labels = tuple(scale)
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in labels)
    strs = all(isinstance(v, str) and v for v in labels)
    if len(labels) < 2 or not (ints or strs):
        raise InputError("scale must list at least two labels, all integers or all non-empty"
                         f" strings, got {list(labels)!r}", field="scale")
    if len(set(labels)) != len(labels):
        raise InputError(f"scale repeats a label: {list(labels)!r}", field="scale")
    return labels


def is_ordinal(scale: Sequence[Label]) -> bool:
    """True for an integer (ordinal) scale, False for a string (nominal) one."""
    return isinstance(scale[0], int)


class _Verdict(BaseModel):  # the verdict schema: a score and a reason, nothing else
    model_config = ConfigDict(extra="forbid", strict=True)
    score: StrictInt | StrictFloat | StrictStr
    reason: StrictStr


def parse_verdict(raw: str, scale: Sequence[Label]) -> tuple[Label, str]:
    """The ``(score, reason)`` of a raw verdict, or `ValueError` saying what is wrong.

    The reply is read by the one bounded reader (`rankproof.data.parse_document`):
    a deeply nested reply is a refused verdict, never a ``RecursionError``."""
    try:
        obj = parse_document(raw, "verdict", what="verdict", finite=True)
    except InputError as exc:
        reason = exc.reason.removeprefix("cannot read the verdict: ").removeprefix(
            "invalid JSON: ")
        raise ValueError(f"not a JSON object: {reason}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"not a JSON object: got {type(obj).__name__}")
    try:
        verdict = _Verdict.model_validate(obj)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'verdict'}: {e['msg']}"
                             for e in exc.errors())
        raise ValueError(f"does not match the schema: {problems}") from None
    score = verdict.score
    if isinstance(score, float) and not math.isfinite(score):
        raise ValueError(f"score {score!r} is not finite")
    if type(score) is not type(scale[0]) or score not in scale:
        raise ValueError(f"score {score!r} is not one of the scale {list(scale)!r}")
    return score, verdict.reason


JUDGE_CALL_OPERATIONS = 10_000
"""Element operations one judge call counts as in the cost estimate: a lower bound
(a cached call still hashes its key twice and reads a file, tens of microseconds;
a real one waits on a model server for far longer)."""

JUDGE_CALL_BYTES = 256
"""Bytes one call holds until the verdicts are summarised (its work item and its
`Verdict`): a lower bound."""


def check_judge_cost(rows: int, repeat: int) -> None:
    """Refuse ``rows`` x ``repeat`` judge calls before the first is made when they could
    not finish within `rankproof._limits.MAX_ESTIMATED_SECONDS` or fit in memory
    (``--repeat 1000000000`` used to be accepted and run until killed)."""
    from rankproof.stats import Cost, check_cost

    calls = float(rows) * float(repeat)
    check_cost(Cost(calls * JUDGE_CALL_OPERATIONS, calls * JUDGE_CALL_BYTES),
               f"judging {rows} answer(s) {repeat} time(s) each ({calls:.3g} calls)",
               knobs="--repeat", field="repeat")


@dataclass(frozen=True)
class JudgeIdentity:
    """What makes two judges' scores comparable: model, rubric, scale, prompt template."""

    model: str
    rubric_digest: str
    scale: tuple[Label, ...]
    prompt_template_digest: str = PROMPT_TEMPLATE_DIGEST


@dataclass(frozen=True)
class Verdict:
    """One call's outcome for one case and repeat (from 0); an *error row* has ``score``
    None, ``error`` saying why (the raw reply kept) and ``failure`` the reason counted
    (`rankproof.providers.REASONS`, e.g. ``connection refused``): never averaged in."""

    query_id: str
    repeat: int
    score: Label | None
    reason: str | None
    error: str | None
    raw: str | None
    cached: bool
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class JudgeResult:
    """Every verdict of a `Judge.judge` run. ``mean`` (ordinal scale only) is *pooled over
    repeats*: the mean over cases of each case's mean over its valid repeats (with one
    repeat, the mean of the valid verdicts); `repeat_means` are the per-repeat means
    beside it. ``self_agreement``: share of cases whose repeats are all valid and agree;
    ``repeat_kappa``: Cohen's κ between repeats 1 and 2 (None with one repeat)."""

    verdicts: tuple[Verdict, ...]
    repeat: int
    calls: int
    identity: JudgeIdentity
    mean: float | None
    self_agreement: float | None
    repeat_kappa: float | None

    @property
    def n_errors(self) -> int:
        return sum(not v.ok for v in self.verdicts)

    def failures(self) -> dict[str, int]:
        """``{reason: count}`` of the error rows, by failure reason."""
        counts: dict[str, int] = {}
        for v in self.verdicts:
            if not v.ok:
                key = v.failure or "invalid verdict"
                counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items()))

    def case_means(self) -> dict[str, float]:
        """``{query_id: mean of its valid repeats}`` (ordinal scale; cases with none left
        out): each case's value in the pooled `mean`."""
        per: dict[str, list[float]] = {}
        for v in self.verdicts:
            if isinstance(v.score, int):
                per.setdefault(v.query_id, []).append(float(v.score))
        return {q: sum(xs) / len(xs) for q, xs in per.items()}

    def repeat_means(self) -> list[float | None]:
        """The mean of each repeat's valid verdicts (ordinal scale), in repeat order."""
        out: list[float | None] = []
        for r in range(self.repeat):
            xs = [float(v.score) for v in self.verdicts
                  if v.repeat == r and isinstance(v.score, int)]
            out.append(sum(xs) / len(xs) if xs and self.mean is not None else None)
        return out

    def scores(self, repeat: int = 0) -> dict[str, Label]:
        """``{query_id: score}`` of the valid verdicts of one repeat (errors left out)."""
        return {v.query_id: v.score for v in self.verdicts
                if v.repeat == repeat and v.score is not None}


class Judge:
    """An LLM judge over answer rows (rules: the module docstring). ``call(prompt, *,
    model) -> str`` returns the raw reply; ``cache_dir`` defaults to
    ``rankproof.retrieval.default_cache_dir() / "judge"``."""

    def __init__(self, rubric: str, model: str, scale: Sequence[Label], call: JudgeCall, *,
                 cache_dir: PathLike | None = None, name: str | None = None) -> None:
        if not isinstance(rubric, str) or not rubric.strip():
            raise InputError(f"rubric must be a non-empty string, got {rubric!r}",
                             field="rubric")
        if not isinstance(model, str) or not model.strip():
            raise InputError("model is required: name the judge model (it is part of what a"
                             f" judged score means), got {model!r}", field="model")
        if not callable(call):
            raise TypeError(f"call must be callable (prompt, *, model) -> str, got {call!r}")
        self.rubric = rubric
        self.model = model
        self.scale = check_scale(scale)
        self.call = call
        self.cache_dir = Path(cache_dir) if cache_dir is not None else (
            default_cache_dir() / "judge")
        self.name = name or "judge"
        self.identity = JudgeIdentity(model, digest_json(rubric), self.scale)

    @property
    def ordinal(self) -> bool:
        return is_ordinal(self.scale)

    def prompt(self, query: str, answer: str, contexts: Sequence[Context]) -> str:
        """`PROMPT_TEMPLATE` filled for one case."""
        shown = "\n".join(f"[{i}] ({c.id}) {c.text}" for i, c in enumerate(contexts, 1))
        return PROMPT_TEMPLATE.format(rubric=self.rubric, scale=json.dumps(list(self.scale)),
                                      query=query, answer=answer, contexts=shown or "(none)")

    def cache_key(self, query: str, answer: str, contexts: Sequence[Context],
                  repeat: int) -> str:
        """The hex key of one call: model, rubric, scale, template, input and repeat index."""
        case = digest_json({"query": query, "answer": answer,
                       "contexts": [[c.id, c.text] for c in contexts]})
        return digest_json({"model": self.model, "rubric": self.identity.rubric_digest,
                       "scale": list(self.scale), "template": PROMPT_TEMPLATE_DIGEST,
                       "input": case, "repeat": repeat}).removeprefix("sha256:")

    def _cache_path(self, key: str) -> Path:
        return self.cache_dir / key[:2] / f"{key}.json"

    def _cached(self, key: str) -> str | None:
        path = self._cache_path(key)
        try:
            entry = parse_document(path.read_bytes(), str(path), what="judge cache entry")
            if entry["version"] == JUDGE_CACHE_VERSION and entry["key"] == key:
                return str(entry["raw"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            pass
        logger.warning("ignoring judge cache entry %s: unreadable or another version", path)
        return None

    def _store(self, key: str, raw: str) -> None:
        entry = {"version": JUDGE_CACHE_VERSION, "key": key, "model": self.model, "raw": raw}
        with atomic_write(self._cache_path(key)) as fh:
            json.dump(entry, fh, ensure_ascii=False)

    def judge_one(self, query_id: str, query: str, answer: str,
                  contexts: Sequence[Context] = (), *, repeat: int = 0) -> tuple[Verdict, bool]:
        """One verdict, and whether a real call was made. A reply is cached whether or not
        it parses; a call failing with a rankproof error (`TargetError`) is an error row,
        not cached, so the next run asks again."""
        key = self.cache_key(query, answer, contexts, repeat)
        raw = self._cached(key)
        called = raw is None
        if raw is None:
            try:
                reply = self.call(self.prompt(query, answer, contexts), model=self.model)
            except RankproofError as exc:
                return Verdict(query_id, repeat, None, None, f"call failed: {exc}", None,
                               False, failure_reason(exc)), True
            if not isinstance(reply, str):
                raise TypeError(f"the judge call returned {type(reply).__name__}, expected str")
            raw = reply
            self._store(key, raw)
        try:
            score, reason = parse_verdict(raw, self.scale)
        except ValueError as exc:
            failure = "invalid JSON" if str(exc).startswith("not a JSON") else "schema violation"
            return Verdict(query_id, repeat, None, None, str(exc), raw, not called,
                           failure), called
        return Verdict(query_id, repeat, score, reason, None, raw, not called), called

    def judge(self, rows: Iterable[AnswerRow], repeat: int = 1, *,
              queries: Mapping[str, str] | None = None,
              executor: Executor | None = None) -> JudgeResult:
        """Judge every row ``repeat`` times (each a separately cached call); the query is
        ``row.query``, else ``queries[row.query_id]``, else empty. ``executor`` (an engine)
        makes the calls concurrently: same verdicts and call count (`rankproof.rag._fanout`).
        """
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise InputError(f"repeat must be a positive integer, got {repeat!r}",
                             field="repeat")
        rows = tuple(rows)
        check_judge_cost(len(rows), repeat)
        verdicts, calls = judge_all(self, rows, repeat, queries, executor)
        return self._summarise(verdicts, repeat, calls)

    def _summarise(self, verdicts: tuple[Verdict, ...], repeat: int, calls: int
                   ) -> JudgeResult:
        per: dict[str, list[float]] = {}
        for v in verdicts:
            if isinstance(v.score, int):
                per.setdefault(v.query_id, []).append(float(v.score))
        case = [sum(xs) / len(xs) for xs in per.values()]
        mean = sum(case) / len(case) if self.ordinal and case else None
        agreement = kappa = None
        if repeat >= 2:
            per_case: dict[str, dict[int, Label | None]] = {}
            for v in verdicts:
                per_case.setdefault(v.query_id, {})[v.repeat] = v.score
            agree = [len(set(s.values())) == 1 for s in per_case.values()
                     if None not in s.values()]
            agreement = sum(agree) / len(agree) if agree else None
            pairs = [(a, b) for s in per_case.values()
                     if (a := s.get(0)) is not None and (b := s.get(1)) is not None]
            if pairs:
                kappa = cohen_kappa([a for a, _ in pairs], [b for _, b in pairs], self.scale)
        return JudgeResult(verdicts, repeat, calls, self.identity, mean, agreement, kappa)


def failure_reason(exc: BaseException) -> str:
    """The counted reason of a failed call: the provider's (`ProviderError.reason`), else
    one read from the message of another adapter's `TargetError`."""
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str):
        return reason
    status = getattr(exc, "status", None)
    text = str(exc).lower()
    if "refused" in text:
        return "connection refused"
    if "timeout" in text or "deadline" in text:
        return "timeout"
    if "max_body_bytes" in text:
        return "reply too large"
    if isinstance(status, int) and status >= 400:
        return f"HTTP {status}"
    return "call failed"


def cohen_kappa(a: Sequence[Label], b: Sequence[Label], scale: Sequence[Label]) -> float | None:
    """Cohen's κ between two raters over ``scale`` (None when undefined).

    Quadratic-weighted on an ordinal (integer) scale, with weights
    ``(i − j)²`` over the labels' positions in ``scale`` (as
    ``sklearn.metrics.cohen_kappa_score(a, b, labels=scale,
    weights="quadratic")``); unweighted on a nominal one. None when the
    expected disagreement is zero (every rating the same label).
    """
    index = {label: i for i, label in enumerate(scale)}
    k = len(scale)
    table = [[0] * k for _ in range(k)]
    for x, y in zip(a, b, strict=True):
        table[index[x]][index[y]] += 1
    return _kappa(table, is_ordinal(scale))


def _kappa(table: Sequence[Sequence[int]], ordinal: bool) -> float | None:
    k = len(table)
    n = sum(map(sum, table))
    rows = [sum(r) for r in table]
    cols = [sum(table[i][j] for i in range(k)) for j in range(k)]

    def weight(i: int, j: int) -> float:
        return float((i - j) ** 2) if ordinal else float(i != j)

    observed = sum(weight(i, j) * table[i][j] for i in range(k) for j in range(k))
    expected = sum(weight(i, j) * rows[i] * cols[j] / n for i in range(k) for j in range(k))
    if n == 0 or expected == 0:
        return None
    return 1.0 - observed / expected


# -- calibration -----------------------------------------------------------------------------

CALIBRATION_SCHEMA_VERSION = 1


class _CalibrationFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    schema_version: int
    model: str | None
    rubric_digest: str | None
    prompt_template_digest: str | None
    scale: list[StrictInt] | list[StrictStr]
    weighting: str
    kappa: float | None
    accuracy: float
    n: int
    unscored: list[str]
    confusion: list[list[int]]


@dataclass(frozen=True)
class BlockingDecision:
    """Whether a judge-backed check may block a gate, and why (true in a boolean test)."""

    blocking: bool
    reason: str

    def __bool__(self) -> bool:
        return self.blocking


@dataclass(frozen=True)
class JudgeCalibration:
    """A judge's agreement with human labels, stamped with the judge it measured.

    ``confusion[i][j]`` counts cases labelled ``scale[i]`` by a person and
    ``scale[j]`` by the judge; ``kappa`` is Cohen's κ (``weighting``
    ``"quadratic"`` or ``"none"``; None when undefined); ``unscored`` lists
    labelled cases without a valid verdict (left out). Without a stamp
    (``model`` None) it can never let a check block.
    """

    model: str | None
    rubric_digest: str | None
    prompt_template_digest: str | None
    scale: tuple[Label, ...]
    weighting: str
    kappa: float | None
    accuracy: float
    n: int
    unscored: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": CALIBRATION_SCHEMA_VERSION, **asdict(self)}

    def save(self, path: PathLike) -> None:
        """Write the calibration as JSON, atomically."""
        with atomic_write(path) as fh:
            json.dump(self.to_dict(), fh, indent=2, ensure_ascii=False)
            fh.write("\n")

    @classmethod
    def load(cls, path: PathLike) -> JudgeCalibration:
        """Read a file `save` wrote; anything else is an `InputError` naming it."""
        where = str(path)
        try:
            obj = parse_document(read_bytes(path, "the judge calibration file"), where,
                                 what="judge calibration file", finite=True)
            data = _CalibrationFile.model_validate(obj)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise InputError(f"not a judge calibration file: {first['msg']}", path=where,
                             field=".".join(map(str, first["loc"])) or None) from None
        except InputError as exc:
            raise InputError(f"not a judge calibration file: {exc.reason}", path=where,
                             line=exc.line, field=exc.field) from None
        except ValueError as exc:
            raise InputError(f"not a judge calibration file: {exc}", path=where) from None
        if data.schema_version != CALIBRATION_SCHEMA_VERSION:
            raise InputError(f"schema_version {data.schema_version} is not supported (expected"
                             f" {CALIBRATION_SCHEMA_VERSION})", path=where,
                             field="schema_version")
        try:
            scale = check_scale(data.scale)
        except InputError as exc:
            raise InputError(exc.reason, path=where, field="scale") from None
        k = len(scale)
        if len(data.confusion) != k or any(len(r) != k or min(r) < 0 for r in data.confusion):
            raise InputError(f"confusion must be a {k}x{k} table of counts", path=where,
                             field="confusion")
        return cls(data.model, data.rubric_digest, data.prompt_template_digest, scale,
                   data.weighting, data.kappa, data.accuracy, data.n, tuple(data.unscored),
                   tuple(tuple(r) for r in data.confusion))

    def allows_blocking(self, kappa_floor: float, judge: Judge | JudgeIdentity
                        ) -> BlockingDecision:
        """May a check backed by ``judge`` block a gate? Only if this calibration is for
        that very judge (model, rubric, scale, template) and κ ≥ ``kappa_floor``."""
        if (isinstance(kappa_floor, bool) or not isinstance(kappa_floor, int | float)
                or not -1.0 <= kappa_floor <= 1.0):
            raise InputError(f"kappa_floor must be a number in [-1, 1], got {kappa_floor!r}",
                             field="kappa_floor")
        ident = judge.identity if isinstance(judge, Judge) else judge
        advisory = "advisory: "
        if self.model is None or self.rubric_digest is None:
            return BlockingDecision(False, advisory + "the calibration is not stamped with a"
                                    " judge (model and rubric unknown)")
        stale = [f"{what} {mine!r} (this judge: {theirs!r})" for what, mine, theirs in (
            ("model", self.model, ident.model),
            ("rubric", self.rubric_digest, ident.rubric_digest),
            ("scale", list(self.scale), list(ident.scale)),
            ("prompt template", self.prompt_template_digest, ident.prompt_template_digest),
        ) if mine != theirs]
        if stale:
            return BlockingDecision(False, advisory + "the calibration is for another judge: "
                                    + "; ".join(stale))
        if self.kappa is None:
            return BlockingDecision(False, advisory + "κ is undefined (every rating the same"
                                    f" label) over n={self.n}")
        if self.kappa < kappa_floor:
            return BlockingDecision(False, advisory + f"κ = {self.kappa:.3f} is below the"
                                    f" floor {kappa_floor:g} (n={self.n})")
        return BlockingDecision(True, f"calibrated: κ = {self.kappa:.3f} ≥ floor"
                                f" {kappa_floor:g} over n={self.n} labelled cases")


def _labels(values: Mapping[str, Any], scale: Sequence[Label], what: str) -> dict[str, Label]:
    if not isinstance(values, Mapping):
        raise InputError(f"{what} must map query ids to labels, got {type(values).__name__}",
                         field=what)
    for qid, label in values.items():
        if type(label) is not type(scale[0]) or label not in scale:
            raise InputError(f"label {label!r} is not one of the scale {list(scale)!r}",
                             field=f"{what}[{qid!r}]")
    return dict(values)


def calibrate(judge_scores: Mapping[str, Label] | JudgeResult,
              human_labels: Mapping[str, Label], *, scale: Sequence[Label],
              judge: Judge | JudgeIdentity | None = None) -> JudgeCalibration:
    """Agreement of ``judge_scores`` ``{query_id: score}`` (or a `JudgeResult`: its
    first repeat, its judge) with ``human_labels`` ``{query_id: label}``, paired by id.
    Pass ``judge`` so the result is stamped; unstamped, it can never let a check block.
    """
    labels = check_scale(scale)
    if isinstance(judge_scores, JudgeResult):
        judge = judge or judge_scores.identity
        judge_scores = judge_scores.scores(0)
    ident = judge.identity if isinstance(judge, Judge) else judge
    if ident is not None and list(ident.scale) != list(labels):
        raise InputError(f"scale {list(labels)!r} is not the judge's {list(ident.scale)!r}",
                         field="scale")
    scores = _labels(judge_scores, labels, "judge_scores")
    human = _labels(human_labels, labels, "human_labels")
    paired = sorted(q for q in human if q in scores)
    if not paired:
        raise InputError(f"none of the {len(human)} labelled cases has a valid judge score",
                         field="human_labels")
    index = {label: i for i, label in enumerate(labels)}
    table = [[0] * len(labels) for _ in labels]
    for q in paired:
        table[index[human[q]]][index[scores[q]]] += 1
    ordinal = is_ordinal(labels)
    return JudgeCalibration(
        model=ident.model if ident else None,
        rubric_digest=ident.rubric_digest if ident else None,
        prompt_template_digest=ident.prompt_template_digest if ident else None,
        scale=labels, weighting="quadratic" if ordinal else "none",
        kappa=_kappa(table, ordinal),
        accuracy=sum(table[i][i] for i in range(len(labels))) / len(paired),
        n=len(paired), unscored=tuple(sorted(q for q in human if q not in scores)),
        confusion=tuple(tuple(r) for r in table))
