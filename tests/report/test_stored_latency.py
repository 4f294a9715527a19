"""A run result's latency summary is computed when the result is written, not when it is
shown: the report's view reads it from the JSON (renderers compute nothing, issue 22)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gate._helpers import result

from rankproof.report.document import parse
from rankproof.report.views import build
from rankproof.stats import nearest_rank

LATENCY = {"a": 10.0, "b": 30.0, "c": 20.0, "d": 400.0}


def _view(doc: dict[str, object], tmp_path: Path) -> object:
    raw = json.dumps(doc).encode()
    return build(parse(raw, tmp_path / "run.json"))


def test_the_summary_is_stored_and_the_view_shows_it(tmp_path: Path) -> None:
    run = result({c: {"RR": 1.0} for c in LATENCY}, latency=LATENCY)
    doc = run.to_dict()
    values = list(LATENCY.values())
    assert doc["latency"] == {"n": 4.0, "p50": nearest_rank(values, 50),
                              "p95": nearest_rank(values, 95), "p99": 400.0,
                              "mean": 115.0, "max": 400.0}
    doc["latency"]["p95"] = 123.0  # the view shows what is stored, and computes nothing
    view = _view(doc, tmp_path)
    (stage,) = view.latency.stages  # type: ignore[attr-defined]
    assert stage[1]["p95"] == 123.0 and stage[1]["n"] == 4.0


def test_an_untimed_result_stores_none_and_an_older_one_says_so(tmp_path: Path) -> None:
    untimed = result({"a": {"RR": 1.0}}).to_dict()
    assert "latency" not in untimed and _view(untimed, tmp_path).latency is None  # type: ignore[attr-defined]
    older = result({c: {"RR": 1.0} for c in LATENCY}, latency=LATENCY).to_dict()
    del older["latency"]
    view = _view(older, tmp_path)
    assert view.latency is None  # type: ignore[attr-defined]
    assert any("stores no latency summary" in c for c in view.caveats)  # type: ignore[attr-defined]
