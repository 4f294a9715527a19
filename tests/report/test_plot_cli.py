"""``rankproof plot``: every figure kind in PNG, SVG and PDF, valid files, identical bytes on
a second run, publication defaults, and refusals (exit 2) that name what the result supports.

The comparison fixture is the DL19 passage comparison of three rankllm runs
(``fixtures/cmp.json``, see ``fixtures/README.md``); the discovery fixture holds the
calibration and distractor curves; the trend is a `rankproof.history.Trend` built here.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, cast

import pytest
from typer.testing import CliRunner

from rankproof._errors import InputError
from rankproof.cli import app
from rankproof.history import Trend, TrendPoint
from rankproof.report import figures
from rankproof.report.document import read
from rankproof.report.views import build

FIXTURES = Path(__file__).parent / "fixtures"
CMP = FIXTURES / "cmp.json"
DISCOVERY = FIXTURES / "discovery.json"
EVAL = FIXTURES / "eval.json"
SYSTEM = "D_BERT_KD_TASB/trec_results_dl19"
SVG = "{http://www.w3.org/2000/svg}"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["plot", *args])
    return result.exit_code, result.stderr


@pytest.fixture(scope="module")
def trend_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    steps = [None, "no detectable difference", "worse", "better", "no detectable difference"]
    points = tuple(TrendPoint(index=i, id=f"r{i}", created_at=f"2026-01-0{i + 1}T00:00:00",
                              commit=f"{i:040x}", branch="main", system="bm25", n=43,
                              mean=0.48 + 0.01 * (i % 3), step=steps[i],
                              difference=None if i == 0 else 0.01, p_value=None if i == 0
                              else 0.2, p_corrected=None if i == 0 else 0.4)
                   for i in range(5))
    trend = Trend(measure="nDCG@10", run="bm25", branch="main", higher_is_better=True,
                  test="randomization", correction="holm", alpha=0.05, points=points,
                  rows=(), total=5)
    path = tmp_path_factory.mktemp("trend") / "trend.json"
    path.write_text(json.dumps(trend.to_dict()), encoding="utf-8")
    return path


#: kind -> the result and the options that choose one figure of it.
def _cases(trend: Path) -> dict[str, tuple[Path, list[str]]]:
    return {
        "forest": (CMP, ["-m", "nDCG@10"]),
        "per-query": (CMP, ["-m", "ndcg_cut.10", "--system", SYSTEM]),
        "null": (CMP, ["-m", "AP", "--system", SYSTEM]),
        "curve": (DISCOVERY, ["-m", "distractor"]),
        "trend": (trend, []),
    }


def _check(path: Path, fmt: str) -> None:
    blob = path.read_bytes()
    if fmt == "png":
        assert blob.startswith(b"\x89PNG\r\n\x1a\n")
    elif fmt == "pdf":
        assert blob.startswith(b"%PDF-") and blob.rstrip().endswith(b"%%EOF")
        assert b"/FontFile2" in blob  # TrueType (Type 42) fonts, embedded
        assert b"/CreationDate" not in blob and b"/Producer" not in blob
    else:
        root = ET.fromstring(blob)
        assert root.tag == f"{SVG}svg"
        assert root.find(f".//{SVG}path") is not None
        assert b"<dc:date>" not in blob


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
@pytest.mark.parametrize("kind", list(figures.FIGURE_KINDS))
def test_every_kind_in_every_format(kind: str, fmt: str, trend_json: Path,
                                    tmp_path: Path) -> None:
    source, options = _cases(trend_json)[kind]
    out = tmp_path / f"fig.{fmt}"
    code, err = invoke(str(source), "--kind", kind, *options, "-o", str(out))
    assert code == 0, err
    assert f"wrote {out} ({kind}, {fmt}" in err
    _check(out, fmt)


@pytest.mark.parametrize("kind", list(figures.FIGURE_KINDS))
def test_svg_and_pdf_bytes_are_identical_across_runs(kind: str, trend_json: Path,
                                                     tmp_path: Path) -> None:
    source, options = _cases(trend_json)[kind]
    for fmt in ("svg", "pdf"):
        first, second = tmp_path / f"a.{fmt}", tmp_path / f"b.{fmt}"
        for out in (first, second):
            code, err = invoke(str(source), "--kind", kind, *options, "-o", str(out))
            assert code == 0, err
        assert first.read_bytes() == second.read_bytes(), (kind, fmt)


def test_the_html_report_draws_the_same_figure() -> None:
    """One implementation: the report's forest plot is the drawing `plot` saves."""
    from rankproof.report._svg import to_svg
    from rankproof.report.html import render_html

    view = build(read(CMP))
    drawing = figures.draw_figure(view, figures.FigureRequest("forest", "nDCG@10"))
    svg = to_svg(drawing, id_prefix="forest0-")
    assert svg in render_html(view)


def test_a_kind_the_result_cannot_support_is_refused_with_the_kinds_it_can(
        tmp_path: Path, trend_json: Path) -> None:
    out = tmp_path / "fig.png"
    code, err = invoke(str(CMP), "--kind", "curve", "-o", str(out))
    assert code == 2
    assert "cannot be drawn as --kind curve; it supports forest, per-query, null" in err
    code, err = invoke(str(DISCOVERY), "--kind", "forest", "-o", str(out))
    assert code == 2 and "it supports curve" in err
    code, err = invoke(str(trend_json), "--kind", "null", "-o", str(out))
    assert code == 2 and "this trend cannot be drawn as --kind null; it supports trend" in err
    assert not out.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--kind", "pie"], "--kind must be one of forest, per-query, null, curve, trend, got 'pie'"),
    (["--kind", "forest"], "the result holds several measures (nDCG@10, RR@10, AP, R@100, "
                           "P@10); choose one with -m"),
    (["--kind", "forest", "-m", "P@5"], "-m 'P@5': the result holds no such measure"),
    (["--kind", "per-query", "-m", "AP"], "the result holds several candidates"),
    (["--kind", "null", "-m", "AP", "--system", "nope"], "--system 'nope': the result holds "
                                                         "no such candidate"),
    (["--kind", "forest", "-m", "AP", "--system", SYSTEM], "a forest figure takes none"),
])
def test_bad_choices_are_input_errors(args: list[str], message: str, tmp_path: Path) -> None:
    out = tmp_path / "fig.svg"
    code, err = invoke(str(CMP), *args, "-o", str(out))
    assert code == 2, err
    assert message in " ".join(err.split())
    assert not out.exists()


def test_the_format_comes_from_the_suffix(tmp_path: Path) -> None:
    code, err = invoke(str(CMP), "--kind", "forest", "-m", "AP", "-o", str(tmp_path / "f.jpg"))
    assert code == 2 and "expected .png, .svg or .pdf, got 'f.jpg'" in err


def test_not_a_result_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"kind": "rankproof.history.trend", "measure": "AP", "points": [{}]}',
                   encoding="utf-8")
    code, err = invoke(str(bad), "--kind", "trend", "-o", str(tmp_path / "f.svg"))
    assert code == 2 and "numeric 'index' and 'mean'" in err


def test_missing_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, err = invoke(str(CMP), "--kind", "forest", "-m", "AP", "-o", str(tmp_path / "f.png"))
    assert code == 2
    assert "pip install 'rankproof[report]'" in err


def test_column_width_figures_have_no_overlapping_tick_labels() -> None:
    """The eval report's Success@5 forest plot, at a column's width and narrower."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    view = build(read(EVAL))
    drawing = figures.draw_figure(view, figures.FigureRequest("forest", "Success@5"))
    for width in (figures.COLUMN_WIDTH, 2.0):
        with matplotlib.rc_context(cast(Any, figures.PUBLICATION_RC)):
            fig = Figure(figsize=(width, 1.5), layout="constrained")
            FigureCanvasAgg(fig)
            drawing.draw(fig)
            figures.fit_text(fig)
            figures.declutter(fig)
            fig.draw_without_rendering()
            for ax in fig.axes:
                for axis in (ax.xaxis, ax.yaxis):
                    boxes = [t.get_window_extent() for t in axis.get_ticklabels()
                             if t.get_visible() and t.get_text()]
                    assert len(boxes) >= 2
                    assert not any(a.overlaps(b) for i, a in enumerate(boxes)
                                   for b in boxes[i + 1:]), (width, axis.axis_name)


def test_save_figure_validates_its_arguments() -> None:
    drawing = figures.draw_figure(build(read(CMP)), figures.FigureRequest("forest", "AP"))
    with pytest.raises(InputError, match="format must be one of png, svg, pdf"):
        figures.save_figure(drawing, "gif")
    with pytest.raises(InputError, match="width must be between 1 and 20 inches"):
        figures.save_figure(drawing, "png", width=0.5)


def test_declutter_thins_a_crowded_numeric_axis() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(1.6, 1.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([-0.3125, 0.0312], [0, 1])
    ax.xaxis.set_major_locator(MaxNLocator(nbins=12))  # a plot's own dense ticks

    def crowded() -> bool:
        fig.draw_without_rendering()
        boxes = [t.get_window_extent() for t in ax.xaxis.get_ticklabels() if t.get_text()]
        return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])

    assert crowded()
    figures.declutter(fig)
    assert not crowded()
