"""Markdown reports: golden files for every kind of document, the 65,536-character limit,
and names from files that must print as written.

The golden files (``golden/<fixture>.md``) are the Markdown of the committed
fixtures (``fixtures/<kind>.json``; see ``fixtures/README.md`` for how each was
made). After an intended change to the renderer or the view, regenerate them
and review the diff:

    RANKPROOF_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/report/test_markdown.py
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankproof.report.document import read
from rankproof.report.markdown import md_text, render_markdown
from rankproof.report.view import Table, View
from rankproof.report.views import build

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
KINDS = ("cmp", "gate", "rag", "measure", "discovery", "eval")
UPDATE = os.environ.get("RANKPROOF_UPDATE_GOLDEN") == "1"
LIMIT = 65_536
HOSTILE = "<script>alert(1)</script>|`x`\x1b[31m*b*_$m$\n# h"


def view_of(path: Path) -> View:
    return build(read(path))


def cells(line: str) -> int:
    """The number of cells of a GFM table line (``\\|`` is an escaped pipe, not a border)."""
    return len(re.findall(r"(?<!\\)\|", line)) - 1


def tables_of(text: str) -> list[list[str]]:
    """Every table of ``text``: runs of consecutive lines that start with ``|``."""
    out: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def assert_well_formed(text: str) -> None:
    """Each table: a header, a delimiter row, rows, all with the header's number of cells."""
    for table in tables_of(text):
        assert len(table) >= 2, table
        assert re.fullmatch(r"\|(-{3}:?\|)+", table[1]), table[1]
        width = cells(table[0])
        assert width >= 1
        for line in table:
            assert line.endswith(" |") or line == table[1], line
            assert cells(line) == width, (line, width)


@pytest.mark.parametrize("kind", KINDS)
def test_golden(kind: str) -> None:
    text = render_markdown(view_of(FIXTURES / f"{kind}.json"))
    golden = GOLDEN / f"{kind}.md"
    if UPDATE:
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8"), (
        f"{golden.name} differs; if the change is intended, rerun with "
        "RANKPROOF_UPDATE_GOLDEN=1 and review the diff")


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_is_well_formed_and_deterministic(kind: str) -> None:
    view = view_of(FIXTURES / f"{kind}.json")
    text = render_markdown(view)
    assert text == render_markdown(view_of(FIXTURES / f"{kind}.json"))
    assert text.startswith("# ") and len(text) <= LIMIT
    assert_well_formed(text)
    assert "more rows" not in text and "left out" not in text
    assert "<details><summary>Provenance</summary>" in text and text.endswith("</details>\n")
    assert view.digest in text


def test_verdict_rows_show_their_own_interval_and_level() -> None:
    """The interval printed is the row's (at its Holm level), not a 95% one beside it."""
    view = view_of(FIXTURES / "cmp.json")
    text = render_markdown(view)
    assert len(view.verdicts) == 10
    for v in view.verdicts:
        assert v.ci_low is not None and v.ci_high is not None and v.ci_level is not None
        interval = f"[{v.ci_low:+.4f}, {v.ci_high:+.4f}] | {v.ci_level * 100:.4g}%"
        assert interval in text
    assert "99.5%" in text and "inverted sign-flip randomization test" in text
    assert "p corrected by holm, α = 0.05" in text


def test_gate_says_failed_and_regressions_have_query_text() -> None:
    gate = render_markdown(view_of(FIXTURES / "gate.json"))
    assert "**Gate: FAILED**" in gate
    cmp = render_markdown(view_of(FIXTURES / "cmp.json"))
    section = cmp.split("## Largest regressions", 1)[1]
    # DL19 query 19335 fell most for TAS-B on nDCG@10 (0.5756 -> 0.1244); its text is kept.
    assert "| 19335 | anthropological definition of environment | 0.5756 → 0.1244 | -0.4512 |" \
        in section


def _hostile_comparison(tmp_path: Path) -> Path:
    doc = json.loads((FIXTURES / "cmp.json").read_text(encoding="utf-8"))
    old_cand, new_cand = doc["systems"][1], HOSTILE
    old_q, new_q = "19335", "q<b>|`1`\x1b[31m"
    doc["systems"][1] = new_cand
    for row in doc["rows"]:
        if row["candidate"] == old_cand:
            row["candidate"] = new_cand
        row["qids"] = [new_q if q == old_q else q for q in row["qids"]]
    ev = doc["evidence"]
    ev["top"][new_cand] = ev["top"].pop(old_cand)
    for part in (ev["queries"], ev["gold"], *ev["top"].values()):
        part[new_q] = part.pop(old_q)
    ev["queries"][new_q] = "what is <img src=x onerror=alert(1)> | `rm -rf` &amp;"
    doc["caveats"] = ["<iframe src='http://x'></iframe>\n- injected bullet"]
    doc["judged"] = {}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_hostile_names_are_escaped(tmp_path: Path) -> None:
    text = render_markdown(view_of(_hostile_comparison(tmp_path)))
    for raw in ("<script", "<b>", "<img", "<iframe", "\x1b"):
        assert raw not in text
    assert not re.search(r"(?<!\\)[`$]", text), "every backtick and dollar is escaped"
    # A backslash from escaping a control character is itself escaped (it prints as "\x1b").
    assert r"&lt;script&gt;alert(1)&lt;/script&gt;\|\`x\`\\x1b\[31m\*b\*\_\$m\$\\n\# h" in text
    assert r"q&lt;b&gt;\|\`1\`\\x1b\[31m" in text
    assert "what is &lt;img src=x onerror=alert(1)&gt; \\| \\`rm -rf\\` &amp;amp;" in text
    assert r"- &lt;iframe src='http://x'&gt;&lt;/iframe&gt;\\n- injected bullet" in text
    # Every `<` left in the document is the renderer's own: p < 0.0001, the provenance fold.
    assert len(re.findall(r"<(?!0\.0001 )", text)) == 4
    assert "<details><summary>Provenance</summary>" in text
    assert_well_formed(text)


@pytest.mark.parametrize(("raw", "expected"), [
    ("BM25_k1=0.9", "BM25\\_k1=0.9"),
    ("a|b", "a\\|b"),
    ("x\ny", "x\\\\ny"),
    ("<i>&", "&lt;i&gt;&amp;"),
    ("- item", "\\- item"),
    ("1. first", "1\\. first"),
    ("-0.5", "-0.5"),
    ("0.8441", "0.8441"),
    ("[link](http://x)", "\\[link\\](http://x)"),
    ("x" * 2000, "x" * 999 + "…"),
])
def test_md_text(raw: str, expected: str) -> None:
    assert md_text(raw) == expected


def _big_comparison(path: Path, queries: int, candidates: int) -> None:
    """A comparison of ``candidates`` systems over ``queries`` topics on nDCG@10, shaped like
    ``rankproof compare`` writes it (rows from the fixture's first row, values drawn)."""
    template = json.loads((FIXTURES / "cmp.json").read_text(encoding="utf-8"))
    rng = np.random.default_rng(7)
    qids = [f"q{i:05d}" for i in range(queries)]
    base = np.round(rng.random(queries), 3)
    baseline = "BM25/trec_results_dl19"
    systems = [baseline] + [f"SPLADE_P_P_ENSEMBLE_DISTIL_variant_{i:02d}/trec_results_dl19"
                            for i in range(candidates)]
    rows: list[dict[str, Any]] = []
    for name in systems[1:]:
        cand = np.round(np.clip(base + rng.normal(0.0, 0.2, queries), 0, 1), 3)
        row = json.loads(json.dumps(template["rows"][0]))
        row.update(candidate=name, baseline=baseline, qids=qids,
                   baseline_values=base.tolist(), candidate_values=cand.tolist())
        row["result"].update(n=queries, mean_a=float(cand.mean()), mean_b=float(base.mean()),
                             difference=float(cand.mean() - base.mean()))
        rows.append(row)
    doc = {**{k: v for k, v in template.items() if k != "evidence"}, "systems": systems,
           "baseline": baseline, "measures": ["nDCG@10"], "n_topics": queries, "rows": rows,
           "judged": {}}
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_a_7000_query_comparison_fits_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    _big_comparison(path, queries=7_000, candidates=80)
    view = view_of(path)
    assert len(view.browser.queries) == 7_000 if view.browser else False
    text = render_markdown(view, limit=LIMIT)
    assert len(text) <= LIMIT
    assert_well_formed(text)
    cut = re.findall(r"^… ([\d,]+) more rows: see the HTML or JSON report$", text, re.M)
    assert cut, "a truncation note is present"
    # Rows kept plus rows cut is every verdict row: a table loses rows, never half a row.
    verdicts = text.split("## Verdicts", 1)[1].split("\n\n## ", 1)[0]
    shown = [line for line in verdicts.splitlines() if line.startswith("| nDCG@10 |")]
    note = re.search(r"^… ([\d,]+) more rows", verdicts, re.M)
    assert note is not None
    assert len(shown) + int(note.group(1).replace(",", "")) == 80
    assert render_markdown(view, limit=LIMIT) == text
    # Uncut, the same document is longer than the limit.
    assert len(render_markdown(view, limit=10_000_000)) > LIMIT


def test_the_longest_table_is_cut_first_between_rows() -> None:
    view = view_of(FIXTURES / "eval.json")
    per_query = Table(key="pq", title="per-query values", columns=("qid", "value"),
                      rows=tuple((f"q{i}", f"{i / 7000:.4f}") for i in range(7_000)),
                      numeric=(False, True))
    big = dataclasses.replace(view, tables=(*view.tables, per_query))
    text = render_markdown(big)
    assert len(text) <= LIMIT
    assert_well_formed(text)
    section = text.split("## per-query values", 1)[1].split("\n## ", 1)[0]
    kept = [line for line in section.splitlines() if line.startswith("| q")][1:]
    note = re.search(r"^… ([\d,]+) more rows: see the HTML or JSON report$", section, re.M)
    assert note is not None and len(kept) + int(note.group(1).replace(",", "")) == 7_000
    assert kept[-1] == f"| q{len(kept) - 1} | {(len(kept) - 1) / 7000:.4f} |"
    # The other (shorter) tables are untouched: the verdict table keeps all 16 rows.
    assert len([x for x in text.splitlines() if re.match(r"\| \S+ \| (dense|fusion) \|", x)]) \
        == 16


def test_a_tiny_limit_drops_whole_sections_from_the_end() -> None:
    view = view_of(FIXTURES / "eval.json")
    text = render_markdown(view, limit=2_048)
    assert len(text) <= 2_048
    assert_well_formed(text)
    assert text.startswith("# eval: golden")
    assert re.search(r"^… \d+ more section\(s\) left out: see the HTML or JSON report$", text,
                     re.M)
    assert "<details>" not in text or "</details>" in text


@pytest.mark.parametrize("limit", [0, 100, 2047, 3.5, True])
def test_limit_must_leave_room_for_a_report(limit: Any) -> None:
    view = view_of(FIXTURES / "gate.json")
    with pytest.raises(ValueError, match="limit must be an integer of at least 2048, got"):
        render_markdown(view, limit=limit)


def test_regressions_follow_the_measures_polarity() -> None:
    """Where lower is better, a regression is a rise: the largest rises are listed."""
    view = view_of(FIXTURES / "measure.json")
    assert view.browser is not None
    browser = dataclasses.replace(view.browser, higher_is_better={"nDCG@10": False})
    text = render_markdown(dataclasses.replace(view, browser=browser))
    base, cand = browser.baseline, browser.candidates[0]
    rises = sorted(((q.values[cand]["nDCG@10"] - q.values[base]["nDCG@10"], q.qid)
                    for q in browser.queries), key=lambda t: (-t[0], t[1]))
    rises = [r for r in rises if r[0] > 0]
    section = text.split("## Largest regressions", 1)[1]
    assert "whose nDCG@10 rose most" in section and "lower is better" in section
    assert f"{len(rises)} of {len(browser.queries)} paired queries rose" in section
    listed = re.findall(r"^\| (\S+) \| [\d.]+ → [\d.]+ \| \+", section, re.M)
    assert listed == [qid for _, qid in rises[:10]]
