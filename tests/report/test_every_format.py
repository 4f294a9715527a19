"""One result, every format: the same caveats, one spelling per measure, nothing recomputed.

For a comparison (``rankproof compare`` of two DL19 runs), an eval report (the committed
golden-corpus fixture, and a live ``rankproof eval`` for the terminal) and a gate verdict
(``rankproof gate`` of that report's fusion stage against its bm25 stage):

* every caveat and note of the JSON appears in the terminal, Markdown, HTML, LaTeX and
  (gate) JUnit output;
* ``Success@k`` is spelled so in every format (``hit@k`` only as an accepted alias);
* rendering calls no statistics: the null-distribution figure draws the `NullSummary`
  the comparison layer stored in the row, and an old file without one still renders,
  with the figure left out and a note saying why.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import rankproof.stats
from rankproof.cli import app
from rankproof.comparison import ComparisonRow, NullSummary, summarise_null
from rankproof.report.document import read
from rankproof.report.figures import NULL_MISSING_NOTE, FigureRequest, draw_figure
from rankproof.report.html import render_html
from rankproof.report.latex import render_latex, tex_text
from rankproof.report.markdown import render_markdown
from rankproof.report.views import build
from rankproof.stats import null_distribution

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
QRELS = DATA / "trec_dl" / "qrels.dl19-passage.txt"
RUNS = DATA / "rankllm_runs"
needs_data = pytest.mark.skipif(not QRELS.exists(), reason="../shared/data is not present")
runner = CliRunner()

GATE_CHECKS = """\
checks:
  - id: ndcg-floor
    metric: nDCG@10
    op: ">="
    threshold: 0.3
  - id: rr-floor
    metric: RR@10
    op: ">="
    threshold: 0.95
  - id: no-regression
    metric: nDCG@10
    vs_baseline: no_significant_regression
  - id: hit-no-regression
    metric: hit@1
    vs_baseline: no_significant_regression
"""


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "240"})
    return result.exit_code, result.stdout, result.stderr


def unescaped_markdown(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def file_formats(path: Path) -> dict[str, str]:
    """The Markdown, HTML (unescaped) and LaTeX of a saved result, through its one view."""
    view = build(read(path))
    return {"markdown": unescaped_markdown(render_markdown(view)),
            "html": html.unescape(render_html(view)), "latex": render_latex(view)}


def strings_of(doc: Any) -> list[str]:
    """Every caveat and note string anywhere in a JSON document."""
    out: list[str] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key in ("caveats", "notes") and isinstance(value, list):
                out += [v for v in value if isinstance(v, str)]
            else:
                out += strings_of(value)
    elif isinstance(doc, list):
        for value in doc:
            out += strings_of(value)
    return list(dict.fromkeys(out))


def assert_everywhere(strings: list[str], forms: dict[str, str]) -> None:
    for s in strings:
        for name, text in forms.items():
            wanted = tex_text(s, clip=1_000) if name == "latex" else s
            assert wanted in text, f"{name} lacks {s!r}"


# -- the gate verdict: a live gate over the committed eval report ------------------------


@pytest.fixture(scope="module")
def gate_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("gate-every-format")
    checks = root / "checks.yaml"
    checks.write_text(GATE_CHECKS, encoding="utf-8")
    report = str(FIXTURES / "eval.json")
    common = ("gate", str(checks), "--report", report, "--stage", "fusion", "--baseline",
              report, "--baseline-stage", "bm25")
    code, terminal, err = invoke(*common, "--json", str(root / "gate.json"), "--junit",
                                 str(root / "gate.xml"), "--markdown", str(root / "gate.md"))
    assert code in (0, 1), err
    return {"terminal": terminal + err, "json": root / "gate.json",
            "junit": html.unescape((root / "gate.xml").read_text(encoding="utf-8")),
            "summary": unescaped_markdown((root / "gate.md").read_text(encoding="utf-8"))}


def test_every_gate_note_reaches_the_terminal_markdown_html_latex_and_junit(
        gate_run: dict[str, Any]) -> None:
    doc = json.loads(gate_run["json"].read_text(encoding="utf-8"))
    strings = strings_of(doc)
    assert doc["notes"] and "test-double embedder: scores are not semantic" in strings
    assert_everywhere(strings, {"terminal": gate_run["terminal"], "junit": gate_run["junit"],
                                "summary": gate_run["summary"], **file_formats(gate_run["json"])})


def test_the_gate_says_success_at_k_in_every_format(gate_run: dict[str, Any]) -> None:
    forms = {"terminal": gate_run["terminal"], "junit": gate_run["junit"],
             "summary": gate_run["summary"], **file_formats(gate_run["json"])}
    for name, text in forms.items():
        # JUnit details only the failing checks; the hit-rate check passes.
        assert "Success@1" in text or name == "junit", name
        assert "hit@" not in text, name


# -- the eval report -------------------------------------------------------------------


def test_every_eval_caveat_reaches_markdown_html_and_latex() -> None:
    path = FIXTURES / "eval.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    strings = strings_of(doc)
    assert len(doc["caveats"]) == 2 and any(s["notes"] for s in doc["stages"])
    assert_everywhere(strings, file_formats(path))


@pytest.fixture(scope="module")
def live_eval(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    root = tmp_path_factory.mktemp("eval-every-format")
    with contextlib.chdir(root):  # eval also writes evals/results/latest.json in the cwd
        code, out, err = invoke("eval", "--embedder", "hashing", "--quiet", "-o",
                                str(root / "r.json"))
    assert code == 0, err
    return json.loads((root / "r.json").read_text(encoding="utf-8")), out + err


def test_every_eval_caveat_reaches_the_terminal_and_the_hit_rate_is_success(
        live_eval: tuple[dict[str, Any], str]) -> None:
    doc, terminal = live_eval
    assert doc["caveats"]
    for s in strings_of(doc):
        assert s in terminal, s
    assert "Success@1" in terminal and "hit@" not in terminal


def test_the_eval_report_says_success_at_k_in_every_file_format() -> None:
    for name, text in file_formats(FIXTURES / "eval.json").items():
        assert "Success@1" in text, name
        assert "hit@" not in text, name


# -- a comparison: the alias is read, the canonical name is printed ---------------------


@needs_data
def test_compare_reads_hit_at_k_and_prints_success_at_k(tmp_path: Path) -> None:
    out = tmp_path / "cmp.json"
    runs = [str(RUNS / d / "trec_results_dl19.txt") for d in ("BM25", "D_BERT_KD_TASB")]
    code, terminal, err = invoke("compare", str(QRELS), *runs, "-m", "hit@1", "-m", "nDCG@10",
                                 "-o", str(out))
    assert code == 0, err
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["measures"] == ["Success@1", "nDCG@10"]
    forms = {"terminal": terminal + err, **file_formats(out)}
    code, md, _ = invoke("compare", str(QRELS), *runs, "-m", "hit@1", "-f", "md")
    assert code == 0
    forms["compare -f md"] = md
    for name, text in forms.items():
        assert "Success@1" in text and "hit@" not in text, name
    # The rows store their null distribution, bounded, drawn with their own seed.
    row = ComparisonRow.from_dict(doc["rows"][0])
    assert row.null is not None and row.null.shape == "histogram" and len(row.null.y) <= 60
    replay = null_distribution(row.deltas(), resamples=row.result.resamples or 1,
                               seed=row.result.seed or 0)
    assert row.null == NullSummary.from_distribution(replay)
    assert sum(row.null.y) == len(replay.samples)


# -- renderers compute nothing -------------------------------------------------------


@pytest.fixture
def no_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every function of `rankproof.stats` raises (as do the modules' own references)."""
    import sys

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a renderer called rankproof.stats")

    names = [n for n in rankproof.stats.__all__ if callable(getattr(rankproof.stats, n))
             and not isinstance(getattr(rankproof.stats, n), type)]
    for module in [m for name, m in sys.modules.items() if name.startswith("rankproof.stats")]:
        for n in names:
            if hasattr(module, n):
                monkeypatch.setattr(module, n, refuse)


@pytest.mark.parametrize("kind", ["cmp", "eval", "gate"])
def test_rendering_calls_no_statistics(kind: str, no_statistics: None) -> None:
    view = build(read(FIXTURES / f"{kind}.json"))
    page = render_html(view)
    render_markdown(view)
    render_latex(view)
    assert page.count("null distribution of the") >= 1 and NULL_MISSING_NOTE not in page
    v = next(v for v in view.verdicts if v.null is not None)
    draw_figure(view, FigureRequest("null", measure=v.measure, system=v.candidate))


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if k != "null"}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def test_an_old_result_without_stored_nulls_renders_without_the_figure(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    data = json.loads((FIXTURES / "cmp.json").read_text(encoding="utf-8"))
    old.write_text(json.dumps(_without_nulls(data)), encoding="utf-8")
    view = build(read(old))
    assert all(v.null is None for v in view.verdicts)
    page = html.unescape(render_html(view))
    assert NULL_MISSING_NOTE in page and "null distribution of the" not in page
    with pytest.raises(ValueError, match="saved before comparison rows stored them"):
        draw_figure(view, FigureRequest("null", measure=view.verdicts[0].measure))


def test_the_null_summary_is_bounded_and_checked_when_read() -> None:
    d = np.random.default_rng(1).normal(0.02, 0.1, 200)
    for test in ("randomization", "bootstrap", "t", "wilcoxon", "sign"):
        s = NullSummary.from_distribution(null_distribution(d, test=test, resamples=50_000))
        assert len(s.x) <= 242 and len(s.y) <= 241, test
        assert NullSummary.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    bad = {**s.to_dict(), "x": s.to_dict()["x"][:-1]}
    with pytest.raises(ValueError, match=r"needs \d+ x value"):
        NullSummary.from_dict(bad)
    with pytest.raises(ValueError, match="shape must be one of"):
        NullSummary.from_dict({**s.to_dict(), "shape": "pie"})


def test_a_non_inferiority_row_stores_no_null() -> None:
    row = ComparisonRow.from_dict(json.loads((FIXTURES / "cmp.json").read_text())["rows"][0])
    assert summarise_null(row.result, row.differences, margin=0.01) is None
    assert summarise_null(row.result, row.differences) == row.null


# -- every verdict shows the test, the family and the level it was decided at ------------


def test_eval_verdicts_show_their_test_family_and_level(
        live_eval: tuple[dict[str, Any], str]) -> None:
    doc, terminal = live_eval
    n = len(doc["comparisons"])
    assert n == 16  # 2 candidate stages × 8 measures, corrected as one family
    assert f"Verdicts decided by: randomization test, Holm over {n} tests, α = 0.05." in terminal


@needs_data
def test_compare_verdicts_show_their_test_family_and_level(tmp_path: Path) -> None:
    runs = [str(RUNS / d / "trec_results_dl19.txt") for d in ("BM25", "D_BERT_KD_TASB")]
    legend = "Verdicts decided by: t test, Bonferroni over 2 tests, α = 0.1."
    code, terminal, err = invoke("compare", str(QRELS), *runs, "-m", "nDCG@10", "-m", "AP",
                                 "--test", "t", "--correction", "bonferroni", "--alpha", "0.1",
                                 "-o", str(tmp_path / "cmp.json"))
    assert code == 0, err
    assert legend in " ".join(terminal.split())
    forms = file_formats(tmp_path / "cmp.json")
    # The wide LaTeX is the systems × measures table, whose legend says it in its words.
    forms["latex"] = render_latex(build(read(tmp_path / "cmp.json")), style="long")
    for name, text in forms.items():
        wanted = tex_text(legend, clip=1_000) if name == "latex" else legend
        assert wanted in text, name


def test_rows_decided_by_different_rules_say_so_per_row() -> None:
    from rankproof.report.compare import decided_by

    view = build(read(FIXTURES / "cmp.json"))
    same = decided_by(view.verdicts)
    assert same == "Verdicts decided by: randomization test, Holm over 10 tests, α = 0.05."
    import dataclasses

    mixed = (dataclasses.replace(view.verdicts[0], test="t", alpha=0.01), *view.verdicts[1:])
    text = decided_by(mixed)
    first = mixed[0]
    assert text.startswith("Verdicts decided by, per row: t test, Holm over 10 tests, α = 0.01 "
                           f"({first.candidate} on {first.measure}); randomization test")


def test_gate_verdicts_show_their_test_family_and_level(gate_run: dict[str, Any]) -> None:
    rule = "randomization test, 10000 resamples, seed 0, holm correction over 2 baseline checks"
    for name in ("terminal", "summary"):
        assert rule in " ".join(gate_run[name].split()), name
    assert "α=0.05" in " ".join(gate_run["terminal"].split())
