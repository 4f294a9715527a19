"""The fixture headline gate: three headline numbers of a committed fixture, pinned.

A change to metric code can move every number rankproof prints while every
unit test still passes (each checks its own case, not the whole pipeline). The
fixture gate recomputes three headline metrics of one small committed fixture
(package data ``rankproof/fixtures/headline``) with the library's own code and
compares each with a reviewed expected value and that value's own tolerance:

* ``retrieval.mrr@10`` — mean reciprocal rank at 10 (`rankproof.measures`,
  ``RR@10`` at relevance level 1) of a BM25 run over the bundled golden corpus,
  against that corpus's judgments at chunk granularity (``run.txt``,
  ``qrels.txt``);
* ``generation.mean_token_f1`` — mean SQuAD token-F1 of the answers against
  their best reference (`rankproof.rag`'s ``token_f1``; ``answers.jsonl``,
  ``references.jsonl``, from the bundled RAG example);
* ``grounding.mean_lexical_content_token_grounding`` — mean share of each
  answer's content tokens found in the passages it was shown (``grounding``).

The expected file is laid out as seed 003's ``golden.json``::

    {"schema": "rankproof.fixture-expected.v1",
     "metrics": {"retrieval.mrr@10": {"expected": 0.958, "tolerance": 1e-9}, ...}}

A value outside its tolerance (``|observed - expected| > tolerance``), a
headline metric the file does not pin, is a failed check, named; a file that
is not this layout is an `InputError` naming the file, line and field. An
expected file is never rewritten by rankproof: `proposed_expected` returns the
observed values with the current tolerances, for a person to review and commit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof._limits import shown
from rankproof.data import load_qrels, load_run, read_document
from rankproof.measures import evaluate
from rankproof.rag import load_answers, load_references, score_answers

SCHEMA = "rankproof.fixture-expected.v1"
"""The ``schema`` an expected file names (optional in the file; another value is refused)."""

MRR_AT_10 = "retrieval.mrr@10"
MEAN_TOKEN_F1 = "generation.mean_token_f1"
MEAN_GROUNDING = "grounding.mean_lexical_content_token_grounding"
HEADLINE_METRICS: tuple[str, ...] = (MRR_AT_10, MEAN_TOKEN_F1, MEAN_GROUNDING)
"""The three headline metrics of seed 003's fixture gate, by their golden-file names."""

DEFAULT_TOLERANCE = 1e-9
"""The tolerance `proposed_expected` gives a metric the current file does not pin."""

FIXTURE_FILES: tuple[str, ...] = ("qrels.txt", "run.txt", "answers.jsonl", "references.jsonl")
"""What a fixture directory holds (see the module docstring)."""

_TOP_KEYS = ("schema", "notes", "metrics")
_SPEC_KEYS = ("expected", "tolerance")


def fixture_dir() -> Path:
    """The committed fixture (package data ``rankproof/fixtures/headline``)."""
    return Path(str(resources.files("rankproof") / "fixtures" / "headline"))


@dataclass(frozen=True)
class Expected:
    """One pinned headline value: ``|observed - expected| <= tolerance`` passes."""

    name: str
    expected: float
    tolerance: float


@dataclass(frozen=True)
class HeadlineCheck:
    """One headline metric checked: the values, ``|Δ|``, and whether it passed.

    ``expected``/``tolerance`` are None when the expected file does not pin the
    metric (a failure: every headline metric must be pinned).
    """

    name: str
    observed: float
    expected: float | None
    tolerance: float | None

    @property
    def delta(self) -> float | None:
        """``|observed - expected|`` (None when nothing is expected)."""
        return None if self.expected is None else abs(self.observed - self.expected)

    @property
    def passed(self) -> bool:
        return (self.delta is not None and self.tolerance is not None
                and self.delta <= self.tolerance)

    def describe(self) -> str:
        """One line for a person: the value, the expected value, |Δ| and the tolerance."""
        if self.expected is None or self.tolerance is None:
            return (f"{self.name}: observed {self.observed:.12g}, but the expected file pins "
                    "no value for it")
        verdict = "within" if self.passed else "OUTSIDE"
        return (f"{self.name}: expected {self.expected:.12g}, observed {self.observed:.12g}, "
                f"|Δ| {self.delta:.3g} {verdict} tolerance {self.tolerance:.3g}")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "expected": self.expected, "observed": self.observed,
                "abs_delta": self.delta, "tolerance": self.tolerance, "passed": self.passed}


@dataclass(frozen=True)
class FixtureResult:
    """Every headline metric checked against an expected file; failed ones named."""

    expected_path: str
    fixture: str
    checks: tuple[HeadlineCheck, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> tuple[HeadlineCheck, ...]:
        return tuple(c for c in self.checks if not c.passed)

    @property
    def observed(self) -> dict[str, float]:
        return {c.name: c.observed for c in self.checks}

    def to_dict(self) -> dict[str, Any]:
        return {"expected_file": self.expected_path, "fixture": self.fixture,
                "passed": self.passed, "checks": [c.to_dict() for c in self.checks]}


# ------------------------------------------------------------------ the expected file


def _line_of(text: str, keys: Sequence[str]) -> int | None:
    """The line of the last of ``keys``, each looked for (as a JSON key) after the previous."""
    pos = 0
    for key in keys:
        found = re.compile(r'"' + re.escape(key) + r'"\s*:').search(text, pos)
        if found is None:
            return None
        pos = found.start()
    return text.count("\n", 0, pos) + 1


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def load_expected(path: PathLike) -> dict[str, Expected]:
    """Read and validate an expected file; ``{metric: Expected}`` in the file's order.

    Refused (`InputError` with file, line and field): not JSON, not an object,
    an unknown top-level key, ``schema`` other than `SCHEMA`, ``metrics``
    missing, empty or not an object, a metric that is not a headline metric,
    a spec that is not ``{"expected": number, "tolerance": number >= 0}``.
    """
    label = str(path)
    doc = read_document(path, what="expected file")
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""

    def fail(message: str, *keys: str) -> InputError:
        return InputError(message, path=label, line=_line_of(text, keys) if keys else None,
                          field=".".join(keys) if keys else None)

    if not isinstance(doc, dict):
        raise fail(f"expected a JSON object, found {type(doc).__name__}")
    for key in doc:
        if key not in _TOP_KEYS:
            raise fail(f"unknown key {shown(key)}; an expected file holds "
                       f"{', '.join(_TOP_KEYS)}", key)
    if "schema" in doc and doc["schema"] != SCHEMA:
        raise fail(f"schema {shown(doc['schema'])} is not {SCHEMA!r}", "schema")
    metrics = doc.get("metrics")
    if metrics is None:
        raise fail("missing 'metrics': an object of {metric: {expected, tolerance}}")
    if not isinstance(metrics, dict) or not metrics:
        raise fail("'metrics' must be a non-empty object of {metric: {expected, tolerance}}",
                   "metrics")
    out: dict[str, Expected] = {}
    for name, spec in metrics.items():
        if name not in HEADLINE_METRICS:
            raise fail(f"unknown headline metric {shown(name)}; expected one of "
                       f"{', '.join(HEADLINE_METRICS)}", "metrics", name)
        if not isinstance(spec, dict):
            raise fail('expected an object {"expected": number, "tolerance": number}',
                       "metrics", name)
        for key in spec:
            if key not in _SPEC_KEYS:
                raise fail(f"unknown key {shown(key)}; a metric holds 'expected' and "
                           "'tolerance'", "metrics", name, key)
        for key in _SPEC_KEYS:
            if key not in spec:
                raise fail(f"missing {key!r}", "metrics", name)
            if not _number(spec[key]):
                raise fail(f"{key} must be a finite number, got {shown(spec[key])}",
                           "metrics", name, key)
        if spec["tolerance"] < 0:
            raise fail(f"tolerance must be >= 0, got {spec['tolerance']!r}",
                       "metrics", name, "tolerance")
        out[name] = Expected(name, float(spec["expected"]), float(spec["tolerance"]))
    return out


# ------------------------------------------------------------------ observing the fixture


def observe_fixture(fixture: PathLike | None = None) -> dict[str, float]:
    """The three headline metrics of a fixture directory (default: the committed one).

    Each is computed by the library's own code path — `rankproof.measures.evaluate`
    for ``RR@10``, `rankproof.rag.score_answers` for ``token_f1`` and
    ``grounding`` — never by a second implementation.
    """
    root = fixture_dir() if fixture is None else Path(fixture)
    if not root.is_dir():
        raise InputError("the fixture is not a directory", path=str(root))
    for name in FIXTURE_FILES:
        if not (root / name).is_file():
            raise InputError(f"the fixture has no {name} (a fixture holds "
                             f"{', '.join(FIXTURE_FILES)})", path=str(root))
    per_query = evaluate(load_qrels(root / "qrels.txt"), load_run(root / "run.txt"), ["RR@10"])
    report = score_answers(load_answers(root / "answers.jsonl"),
                           load_references(root / "references.jsonl"),
                           metrics=("token_f1", "grounding"))
    means = report.means
    for metric in ("token_f1", "grounding"):
        if metric not in means:
            raise InputError(f"no answer of the fixture is scored by {metric}",
                             path=str(root / "answers.jsonl"))
    return {MRR_AT_10: float(per_query.mean("RR@10")),
            MEAN_TOKEN_F1: float(means["token_f1"]),
            MEAN_GROUNDING: float(means["grounding"])}


def check_fixture(expected_path: PathLike, *, fixture: PathLike | None = None,
                  observed: Mapping[str, float] | None = None) -> FixtureResult:
    """Check the fixture's headline metrics against ``expected_path`` (see the module).

    The expected file is validated before anything is computed; ``observed``
    skips the computation (values already observed for this fixture).
    """
    expected = load_expected(expected_path)
    values = dict(observe_fixture(fixture) if observed is None else observed)
    checks = []
    for name in HEADLINE_METRICS:
        pin = expected.get(name)
        checks.append(HeadlineCheck(name, values[name], None if pin is None else pin.expected,
                                    None if pin is None else pin.tolerance))
    root = fixture_dir() if fixture is None else Path(fixture)
    return FixtureResult(str(expected_path), str(root), tuple(checks))


def proposed_expected(observed: Mapping[str, float],
                      tolerances: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The expected file a person would commit: observed values, current tolerances.

    A metric without a current tolerance gets `DEFAULT_TOLERANCE`.
    """
    tol = dict(tolerances or {})
    return {"schema": SCHEMA,
            "metrics": {name: {"expected": float(observed[name]),
                               "tolerance": float(tol.get(name, DEFAULT_TOLERANCE))}
                        for name in HEADLINE_METRICS}}
