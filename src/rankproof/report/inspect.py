"""Review records for failure analysis: a seeded sample of regressed queries, then the tally.

A verdict says *that* a candidate got worse on some queries; a reviewer
decides *why* by reading them: was the right passage not retrieved
(``retrieval``), retrieved but misused (``generation``), scored unfairly by
the measure (``metric``), or judged wrongly (``annotation``)? `inspect` turns
a document's `View` (anything with a regression browser: an eval report, a
comparison, measure results) into JSON Lines a reviewer fills in:

* a first line ``{"__meta__": {...}}`` naming the source file and its digest,
  the pair and measure compared, the seed, the sample size asked for, how
  many queries regressed and how many were sampled, so that the sample can be
  redrawn exactly (`rankproof.comparison.sample_regressions`);
* one object per sampled query, largest fall first: the query text, its gold
  judgments, each system's value and top results (each id with its grade as
  the gold says), the delta on the measure and on every other measure kept,
  and an empty ``side`` and ``note`` for the reviewer.

`summarize` reads the labelled file back and counts the sides.

Text from the documents (query text, ids) is data: it is written as JSON
strings, with control, line-separator and bidirectional-override characters
escaped so that printing a record cannot move a terminal's cursor or reorder
what a reader sees.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankproof._errors import InputError
from rankproof._version import __version__
from rankproof.comparison import REGRESSION_SAMPLE_SIZE, Regressions, sample_regressions
from rankproof.report.document import KINDS
from rankproof.report.view import Browser, BrowserQuery, View

__all__ = ["META_KEY", "SIDES", "UNLABELLED", "Inspection", "Summary", "inspect", "summarize"]

SIDES = ("retrieval", "generation", "metric", "annotation")
"""Where a regression comes from, as a reviewer labels it."""

UNLABELLED = "unlabelled"
"""How `summarize` counts a record whose ``side`` is still empty."""

META_KEY = "__meta__"
"""The key of the first line of a review file."""

_GRADES_NOTE = ("gold lists the judgments at or above the relevance level; a top result's "
                "grade is its gold grade, null when the gold does not list it (judged "
                "non-relevant or unjudged)")

_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _safe_json(obj: Any) -> str:
    """One JSON line, readable (non-ASCII kept) but with no character that steers a terminal
    (JSON already escapes C0 controls; C1 controls, DEL, line separators and bidi overrides are
    escaped here, which is still the same JSON value)."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True)
class Inspection:
    """The review file: its ``meta`` block and one record per sampled query."""

    meta: dict[str, Any]
    records: tuple[dict[str, Any], ...]
    regressions: Regressions

    def to_jsonl(self) -> str:
        """The file's text: the meta line, then one line per record."""
        lines = [_safe_json({META_KEY: self.meta}), *(_safe_json(r) for r in self.records)]
        return "\n".join(lines) + "\n"


def _canonical(name: str) -> str:
    """The measure's canonical spelling when it parses (``ndcg@10`` → ``nDCG@10``)."""
    from rankproof.measures import parse

    try:
        return str(parse(name))
    except (InputError, ValueError):
        return name


def _choose_measure(view: View, browser: Browser, measure: str | None) -> str:
    if measure is None:
        return view.verdicts[0].measure if view.verdicts else browser.measures[0]
    if measure in browser.measures:
        return measure
    wanted = _canonical(measure)
    for m in browser.measures:
        if _canonical(m) == wanted:
            return m
    raise InputError(f"the document keeps no per-query values of {measure!r:.80}; choose one "
                     f"of {', '.join(browser.measures)}", field="measure")


def _choose_systems(browser: Browser, baseline: str | None,
                    candidate: str | None) -> tuple[str, str]:
    systems = (browser.baseline, *browser.candidates)
    shown = ", ".join(systems)
    for given, option in ((baseline, "baseline"), (candidate, "candidate")):
        if given is not None and given not in systems:
            raise InputError(f"no system {given!r:.80} in the document; choose one of {shown}",
                             field=option)
    base = browser.baseline if baseline is None else baseline
    if candidate is None:
        others = [s for s in systems if s != base]
        if not others:
            raise InputError(f"the document holds one system only ({base}); inspect compares "
                             "two", field="candidate")
        cand = browser.candidates[0] if browser.candidates and browser.candidates[0] != base \
            else others[0]
    else:
        cand = candidate
    if cand == base:
        raise InputError(f"the baseline and the candidate are both {base!r:.80}; choose two "
                         f"different systems of {shown}", field="candidate")
    return base, cand


def _polarity(browser: Browser, measure: str) -> bool:
    if measure in browser.higher_is_better:
        return browser.higher_is_better[measure]
    from rankproof.measures import polarity

    try:
        return polarity(measure)
    except (InputError, ValueError):
        raise InputError(f"the document does not say whether higher {measure!r:.80} is "
                         "better, and no registered metric has that name",
                         field="measure") from None


def _side(q: BrowserQuery, system: str, measure: str) -> dict[str, Any]:
    top = q.top.get(system)
    return {
        "name": system,
        "value": q.values.get(system, {}).get(measure),
        "top": None if top is None else [
            {"rank": i, "id": doc, "grade": q.gold.get(doc)} for i, doc in enumerate(top, 1)],
    }


def _record(q: BrowserQuery, measure: str, baseline: str, candidate: str,
            evidence: bool) -> dict[str, Any]:
    base = q.values.get(baseline, {})
    cand = q.values.get(candidate, {})
    deltas = {m: cand[m] - base[m] for m in base if m in cand}
    return {
        "qid": q.qid,
        "query": q.text,
        "category": q.category,
        "gold": dict(q.gold) if evidence else None,
        "measure": measure,
        "baseline": _side(q, baseline, measure),
        "candidate": _side(q, candidate, measure),
        "delta": deltas[measure],
        "deltas": deltas,
        "side": "",
        "note": "",
    }


def inspect(view: View, *, regressions: int = REGRESSION_SAMPLE_SIZE, seed: int = 0,
            measure: str | None = None, baseline: str | None = None,
            candidate: str | None = None) -> Inspection:
    """Sample up to ``regressions`` queries that fell from ``baseline`` to ``candidate`` on
    ``measure`` (defaults: the first measure of the report, its baseline, its first
    candidate) and build their review records; `InputError` naming the choices when the
    document does not hold what was asked."""
    browser = view.browser
    if browser is None or not browser.queries:
        what = KINDS[view.kind][0] if view.kind in KINDS else view.kind
        raise InputError(f"inspect reads eval reports, comparisons and measure results that "
                         f"keep per-query values; this {what} has none", path=view.source)
    if not browser.measures:
        raise InputError("the document keeps no per-query measures", path=view.source)
    try:
        chosen = _choose_measure(view, browser, measure)
        base, cand = _choose_systems(browser, baseline, candidate)
        higher = _polarity(browser, chosen)
    except InputError as exc:
        raise InputError(exc.reason, path=view.source, field=exc.field) from None
    paired = [q for q in browser.queries
              if chosen in q.values.get(base, {}) and chosen in q.values.get(cand, {})]
    if not paired:
        raise InputError(f"no query has a {chosen} value for both {base} and {cand}",
                         path=view.source, field="measure")
    sample = sample_regressions(
        [q.qid for q in paired], [q.values[base][chosen] for q in paired],
        [q.values[cand][chosen] for q in paired], higher_is_better=higher, n=regressions,
        seed=seed)
    by_qid = {q.qid: q for q in paired}
    records = tuple(_record(by_qid[qid], chosen, base, cand, browser.k > 0)
                    for qid in sample.qids)
    meta = {
        "source": view.source, "digest": view.digest, "kind": view.kind,
        "schema_version": view.schema_version, "measure": chosen,
        "higher_is_better": higher, "baseline": base, "candidate": cand,
        "seed": sample.seed, "n": sample.n, "paired": len(paired),
        "regressed": sample.population, "sampled": len(sample.qids), "k": browser.k,
        "evidence": browser.k > 0, "sides": list(SIDES), "grades": _GRADES_NOTE,
        "rankproof_version": __version__,
    }
    return Inspection(meta=meta, records=records, regressions=sample)


@dataclass(frozen=True)
class Summary:
    """The sides counted in a labelled review file (``counts`` in `SIDES` order, then
    `UNLABELLED`)."""

    path: str
    source: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def labelled(self) -> int:
        return self.total - self.counts.get(UNLABELLED, 0)

    def share(self, side: str) -> float:
        """The side's share of all records (0 when the file has none)."""
        return self.counts.get(side, 0) / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "source": self.source, "total": self.total,
                "labelled": self.labelled, "counts": dict(self.counts),
                "shares": {s: self.share(s) for s in self.counts}}


def _meta_source(obj: Mapping[str, Any], path: str, line: int) -> str:
    meta = obj.get(META_KEY) if len(obj) == 1 else None
    if not isinstance(meta, Mapping):
        raise InputError(f"the first line must be the {{{META_KEY!r}: ...}} line `rankproof "
                         "inspect` writes", path=path, line=line, field=META_KEY)
    source = meta.get("source")
    if not isinstance(source, str) or not source:
        raise InputError("the meta line names no source document", path=path, line=line,
                         field="source")
    return source


def _count(lines: Iterable[tuple[int, dict[str, Any]]], path: str) -> Summary:
    counts = dict.fromkeys((*SIDES, UNLABELLED), 0)
    source: str | None = None
    seen: dict[str, int] = {}
    allowed = ", ".join(repr(s) for s in SIDES)
    for lineno, obj in lines:
        if source is None:
            source = _meta_source(obj, path, lineno)
            continue
        if META_KEY in obj:
            raise InputError("a second meta line: one review file holds one sample",
                             path=path, line=lineno, field=META_KEY)
        qid = obj.get("qid")
        if not isinstance(qid, str):
            raise InputError("a record needs its qid (a string)", path=path, line=lineno,
                             field="qid")
        if qid in seen:
            raise InputError(f"query {qid!r:.80} is labelled twice (first on line "
                             f"{seen[qid]})", path=path, line=lineno, field="qid")
        seen[qid] = lineno
        side = obj.get("side")
        if not isinstance(side, str):
            raise InputError(f"side must be a string ({allowed}, or \"\" while unlabelled)",
                             path=path, line=lineno, field="side")
        key = side.strip().lower()
        if key == "":
            key = UNLABELLED
        elif key not in SIDES:
            raise InputError(f"unknown side {side!r:.40}; a side is one of {allowed} "
                             "(or \"\" while unlabelled)", path=path, line=lineno,
                             field="side")
        counts[key] += 1
    if source is None:
        raise InputError("the file is empty", path=path)
    return Summary(path=path, source=source, counts=counts)


def summarize(path: str | Path) -> Summary:
    """Count the sides of a labelled review file; `InputError` with the file and line for a
    malformed line, an unknown side, a missing meta line or a query labelled twice."""
    from rankproof.data import read_jsonl

    return _count(read_jsonl(path), str(path))
