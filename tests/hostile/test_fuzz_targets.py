"""Fuzz: golden sets (JSONL, YAML, CSV) and the HTTP target's response-body parser.

Property (see ``_fuzz``): mutated golden files give cases or a
`rankproof.RankproofError` (never another exception, never a write); any
response body a service may send gives a `TargetResponse` or a
`rankproof.TargetError` naming the case.
"""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st
from tests.hostile._fuzz import (
    JSON_VALUES,
    REPO,
    dumps,
    fuzz_settings,
    json_text,
    jsonl_text,
    maybe_gzipped,
    mutated,
    mutated_json,
    refused_or_read,
    snapshot,
)

from rankproof import RankproofError, TargetError
from rankproof.data import read_jsonl
from rankproof.targets import Case, HttpTarget, TargetResponse, load_goldens
from rankproof.targets._base import where_of

GOLDEN_ROWS = [row for _, row in read_jsonl(REPO / "examples" / "custom_client"
                                            / "goldens.jsonl")][:5]
GOLDEN_ROWS[1] = {**GOLDEN_ROWS[1], "tags": ["fees", "late"]}
GOLDEN_ROWS[2] = {"id": GOLDEN_ROWS[2]["id"], "query": GOLDEN_ROWS[2]["query"],
                  "relevance": {"lost-items": 2, "fines": 1}, "meta": {"source": "faq"}}


def _csv_seed(rows: list[dict[str, Any]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "query", "relevant", "tags"])
    for row in rows:
        writer.writerow([row["id"], row["query"], ";".join(row.get("relevant", [])),
                         ";".join(row.get("tags", []))])
    return out.getvalue().encode()


YAML_SEED = yaml.safe_dump({"cases": GOLDEN_ROWS}, sort_keys=False).encode()
CSV_SEED = _csv_seed(GOLDEN_ROWS)
# A small "billion laughs": 6 levels of 8 aliases, 262,144 nodes once expanded.
YAML_BOMB = ("a0: &a0 [x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 8)}]\n" for i in range(1, 7))
    + "cases: *a6\n").encode()


@st.composite
def yaml_goldens(draw: st.DrawFn) -> bytes:
    """YAML goldens: structurally mutated (block or flow style), byte-mutated, or a bomb."""
    how = draw(st.sampled_from(("block", "flow", "bytes", "bytes", "bomb")))
    if how == "bomb":
        return YAML_BOMB
    if how == "bytes":
        return draw(mutated(YAML_SEED, 4))
    doc = draw(mutated_json({"cases": GOLDEN_ROWS}))
    if how == "flow":
        return dumps(doc)  # JSON is YAML's flow style
    try:
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True).encode(
            "utf-8", "surrogatepass")
    except (yaml.YAMLError, RecursionError, ValueError):  # a value YAML cannot write
        return dumps(doc)


GOLDEN_FILES = [
    ("goldens.jsonl", jsonl_text(GOLDEN_ROWS)),
    ("goldens.yaml", yaml_goldens()),
    ("goldens.csv", mutated(CSV_SEED, 5)),
]


@given(data=st.data())
@fuzz_settings(500)
def test_load_goldens_refuses_mutated_files_with_typed_errors(data: st.DataObject) -> None:
    name, strategy = data.draw(st.sampled_from(GOLDEN_FILES), label="format")
    content = data.draw(strategy.flatmap(maybe_gzipped), label="file")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(content)
        before = snapshot(Path(tmp))
        refused_or_read(load_goldens, path)
        assert snapshot(Path(tmp)) == before


# -- HTTP response bodies ------------------------------------------------------------

GOOD_BODY = {"ids": ["d3", "d1", "d2"], "text": "an answer", "model": "m", "cost": 0.1}
BODIES = st.one_of(
    json_text(GOOD_BODY),
    JSON_VALUES.map(dumps),
    st.binary(max_size=64),
    st.sampled_from([b"", b"null", b"{}", b'{"ids": null}', b'{"ids": "d1"}',
                     b'{"ids": [1, 2]}', b'{"ids": [["d1"]]}', b'{"ids": ["d1", "d1"]}',
                     b'{"ids": [""]}', b'{"ids": ["\\u001b[2J"]}', b'{"ids": [], "ids": ["x"]}',
                     b'\xef\xbb\xbf{"ids": []}', b'{"ids": ["\\ud800"]}', b"NaN",
                     b'{"ids": [], "text": 1e999}']),
)


def _target() -> HttpTarget:
    # Never connected: only the parser of the body is exercised here (a real server on
    # 127.0.0.1 is the HTTP tests' business).
    return HttpTarget("http://127.0.0.1:9/search", "fuzz", meta_keys=("model", "cost"))


TARGET = _target()


def parse_body(content: bytes, status: int = 200) -> TargetResponse:
    """What `HttpTarget` makes of a 2xx response carrying ``content`` (the body parser
    a real call ends in, fed the bytes directly)."""
    case = Case(id="c1", query="q")
    return TARGET._parse(status, content, f"case 'c1': POST {TARGET.url}", 1.0,
                         where_of(case, "fuzz"))


@given(body=BODIES)
@fuzz_settings(800)
def test_response_bodies_give_a_response_or_a_target_error(body: bytes) -> None:
    outcome = refused_or_read(parse_body, body)
    if isinstance(outcome, RankproofError):
        assert isinstance(outcome, TargetError), f"{type(outcome).__name__}, not TargetError"
    else:
        assert all(isinstance(i, str) for i in outcome.ranked_ids)
