"""The report's plots: inline SVG that parses, is deterministic, shares no id with its
neighbours, fetches nothing, draws names literally, stays small and never crashes on
empty input."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable

import numpy as np
import pytest

from rankproof.comparison import NullSummary
from rankproof.report import plots
from rankproof.stats import null_distribution as _replay


def null_distribution(*args: object, **kwargs: object) -> NullSummary:
    """A replayed null as the comparison layer stores it: what `plots.null_plot` draws."""
    return NullSummary.from_distribution(_replay(*args, **kwargs))  # type: ignore[arg-type]

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
NAMESPACES = ("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink")
HOSTILE = ("<script>alert(1)</script>", "$\\alpha$", "a & b", 'q"uote', "_hidden",
           'id="x1"')


def _delta() -> np.ndarray:
    return np.round(np.random.default_rng(0).normal(0.01, 0.1, 300), 2)


def _series(name: str = "bm25") -> plots.Series:
    xs = [i / 10 for i in range(11)]
    return (name, xs, [1 - x / 2 for x in xs], [0.9 - x / 2 for x in xs],
            [1.0 - x / 3 for x in xs])


#: One call of every plot, with a given id prefix and name (a label from a file).
MAKERS: dict[str, Callable[[str, str], str]] = {
    "forest": lambda p, name: plots.forest_plot(
        "nDCG@10", [(name, 0.2, 0.1, 0.3, "better", 0.95),
                    ("other", -0.01, -0.05, 0.02, "no detectable difference", 0.95),
                    ("worse", -0.2, -0.3, -0.1, "worse", None)], id_prefix=p),
    "delta": lambda p, name: plots.delta_plot(_delta(), higher_is_better=True, title=name,
                                              id_prefix=p),
    "null": lambda p, name: plots.null_plot(null_distribution(_delta()[:60]), title=name,
                                            id_prefix=p),
    "null_t": lambda p, name: plots.null_plot(null_distribution(_delta(), test="t"),
                                              title=name, id_prefix=p),
    "null_wilcoxon": lambda p, name: plots.null_plot(
        null_distribution(_delta(), test="wilcoxon"), title=name, id_prefix=p),
    "null_sign": lambda p, name: plots.null_plot(null_distribution(_delta(), test="sign"),
                                                 title=name, id_prefix=p),
    "latency": lambda p, name: plots.latency_plot(
        [(name, [1.0, 2.0, 3.5, 40.0]), ("dense", [120.0, 130.0, 900.0])], id_prefix=p),
    "curve": lambda p, name: plots.curve_plot("iprec", "recall", "precision",
                                              [_series(name), _series("dense")],
                                              id_prefix=p, y_range=(0, 1)),
    "bar": lambda p, name: plots.bar_plot("taxonomy", [name, "miss"],
                                          [("bm25", [3, 4]), (name, [1, None])],
                                          value_label="queries", id_prefix=p),
}


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def _ids(root: ET.Element) -> list[str]:
    return [e.attrib["id"] for e in root.iter() if "id" in e.attrib]


def _texts(root: ET.Element) -> str:
    return "\n".join("".join(e.itertext()) for e in root.iter(f"{SVG}text"))


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_each_plot_is_one_accessible_scalable_svg_element(kind: str) -> None:
    svg = MAKERS[kind]("p1-", "bm25")
    assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg
    root = _parse(svg)
    assert root.attrib["width"] == "100%" and "height" not in root.attrib
    assert re.fullmatch(r"0 0 [\d.]+ [\d.]+", root.attrib["viewBox"])
    assert root.attrib["role"] == "img" and root.attrib["aria-label"]
    assert root[0].tag == f"{SVG}title" and root[0].text == root.attrib["aria-label"]
    assert len(svg) < 60_000, len(svg)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_same_input_same_bytes(kind: str) -> None:
    assert MAKERS[kind]("p-", "bm25") == MAKERS[kind]("p-", "bm25")


def test_same_bytes_in_a_fresh_process() -> None:
    code = ("from rankproof.report import plots; import sys; "
            "sys.stdout.write(plots.bar_plot('t', ['a', 'b'], [('g', [1.0, 2.5])], "
            "value_label='v', id_prefix='z-'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out == plots.bar_plot("t", ["a", "b"], [("g", [1.0, 2.5])], value_label="v",
                                 id_prefix="z-")


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_every_id_and_reference_carries_the_prefix(kind: str) -> None:
    first, second = MAKERS[kind]("fig1-", "bm25"), MAKERS[kind]("fig2-", "bm25")
    ids1, ids2 = _ids(_parse(first)), _ids(_parse(second))
    assert ids1 and all(i.startswith("fig1-") for i in ids1)
    assert all(i.startswith("fig2-") for i in ids2)
    assert len(set(ids1)) == len(ids1)
    assert not set(ids1) & set(ids2)
    refs = re.findall(r"url\(#([^)]*)\)", first) + [
        e.attrib[a][1:] for e in _parse(first).iter()
        for a in ("href", f"{XLINK}href") if a in e.attrib]
    assert refs and set(refs) <= set(ids1)
    # The one style sheet is scoped to this plot's root element.
    assert "*{" not in first.replace("#fig1-root *{", "")


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_nothing_points_outside_the_document(kind: str) -> None:
    svg = MAKERS[kind]("p-", "bm25")
    urls = re.findall(r"https?://[^\s\"'<>)]*", svg)
    assert set(urls) <= set(NAMESPACES), urls
    for e in _parse(svg).iter():
        for attr in ("href", f"{XLINK}href", "src"):
            if attr in e.attrib:
                assert e.attrib[attr].startswith("#"), e.attrib[attr]
    assert "<image" not in svg and "<script" not in svg and "<foreignObject" not in svg


@pytest.mark.parametrize("kind", ["forest", "delta", "null", "latency", "curve", "bar"])
@pytest.mark.parametrize("name", HOSTILE)
def test_names_from_files_are_drawn_literally(kind: str, name: str) -> None:
    svg = MAKERS[kind]("p-", name)
    root = _parse(svg)  # parses: '<' and '&' were escaped
    assert name in _texts(root), (name, _texts(root))
    assert "<script" not in svg
    if name == 'id="x1"':  # text that looks like an attribute is not rewritten as one
        assert "p-x1" not in svg


def test_control_characters_and_long_names_stay_valid_xml() -> None:
    name = "bad\x00\x1b[31mname\nnext" + "x" * 200
    root = _parse(plots.forest_plot("P@5", [(name, 0.1, 0.0, 0.2, "better", 0.95)],
                                    id_prefix="c-"))
    text = _texts(root)
    assert "bad\ufffd\ufffd[31mname next" in text and "x" * 200 not in text and "…" in text


def test_a_delta_plot_of_7000_queries_stays_small() -> None:
    d = np.round(np.random.default_rng(1).normal(0.0, 0.15, 7000), 3)
    svg = plots.delta_plot(d, higher_is_better=True, title="nDCG@10", id_prefix="big-")
    assert len(svg.encode()) < 150_000, len(svg)
    root = _parse(svg)
    assert len(list(root.iter(f"{SVG}path"))) < 100
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    text = _texts(root)
    assert f"wins ({wins})" in text and f"losses ({losses})" in text
    assert f"ties ({7000 - wins - losses})" in text


def test_wins_follow_the_measures_direction() -> None:
    d = [0.5, 0.2, -0.1, 0.0]
    higher = _texts(_parse(plots.delta_plot(d, higher_is_better=True, title="t",
                                            id_prefix="h-")))
    lower = _texts(_parse(plots.delta_plot(d, higher_is_better=False, title="t",
                                           id_prefix="l-")))
    assert "wins (2)" in higher and "losses (1)" in higher and "ties (1)" in higher
    assert "wins (1)" in lower and "losses (2)" in lower


def test_forest_plot_names_the_measure_and_the_numbers() -> None:
    text = _texts(_parse(MAKERS["forest"]("f-", "bm25")))
    assert "Δ nDCG@10 vs baseline" in text
    assert "+0.2 [+0.1, +0.3] 95% better" in text and "worse" in text


def test_null_plot_shows_the_p_value_and_the_observed_statistic() -> None:
    nd = null_distribution(_delta()[:60])
    assert nd.statistic is not None and nd.shape == "histogram" and len(nd.y) <= 60
    text = _texts(_parse(plots.null_plot(nd, title="nDCG@10", id_prefix="n-")))
    assert f"p = {nd.p_value:.2g}" in text and f"{nd.statistic:.4g}" in text
    assert "10000 resamples, seed 0" in text


EMPTY: dict[str, Callable[[], str]] = {
    "forest": lambda: plots.forest_plot("nDCG@10", [], id_prefix="e-"),
    "delta": lambda: plots.delta_plot([], higher_is_better=True, title="t", id_prefix="e-"),
    "latency": lambda: plots.latency_plot([], id_prefix="e-"),
    "latency_no_values": lambda: plots.latency_plot([("bm25", [])], id_prefix="e-"),
    "curve": lambda: plots.curve_plot("t", "x", "y", [], id_prefix="e-"),
    "curve_none": lambda: plots.curve_plot("t", "x", "y", [("a", [1.0], [None], None, None)],
                                           id_prefix="e-"),
    "bar": lambda: plots.bar_plot("t", [], [], value_label="v", id_prefix="e-"),
    "null_sign_all_ties": lambda: plots.null_plot(null_distribution([0.0, 0.0], test="sign"),
                                                  title="t", id_prefix="e-"),
}


@pytest.mark.parametrize("kind", sorted(EMPTY))
def test_empty_input_says_no_data(kind: str) -> None:
    root = _parse(EMPTY[kind]())
    assert "no data" in _texts(root) or "no reference distribution" in _texts(root)


SINGLE: dict[str, Callable[[], str]] = {
    "forest": lambda: plots.forest_plot("nDCG@10", [("a", 0.0, None, None, "", None)],
                                        id_prefix="s-"),
    "delta": lambda: plots.delta_plot([0.0], higher_is_better=True, title="t", id_prefix="s-"),
    "null": lambda: plots.null_plot(null_distribution([0.3]), title="t", id_prefix="s-"),
    "null_t_flat": lambda: plots.null_plot(null_distribution([0.1, 0.1], test="t"),
                                           title="t", id_prefix="s-"),
    "latency": lambda: plots.latency_plot([("bm25", [0.0])], id_prefix="s-"),
    "curve": lambda: plots.curve_plot("t", "x", "y", [("a", [1.0], [0.5], None, None)],
                                      id_prefix="s-", x_log=True),
    "bar": lambda: plots.bar_plot("t", ["a"], [("", [0.0])], value_label="v", id_prefix="s-",
                                  horizontal=False),
}


@pytest.mark.parametrize("kind", sorted(SINGLE))
def test_single_points_do_not_crash(kind: str) -> None:
    _parse(SINGLE[kind]())


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="id_prefix must be a letter"):
        plots.delta_plot([0.1], higher_is_better=True, title="t", id_prefix='x" onload="')
    with pytest.raises(ValueError, match="equal lengths"):
        plots.curve_plot("t", "x", "y", [("a", [1.0, 2.0], [0.5], None, None)], id_prefix="b-")
    with pytest.raises(ValueError, match="has 1 values for 2 labels"):
        plots.bar_plot("t", ["a", "b"], [("g", [1.0])], value_label="v", id_prefix="b-")


def test_plots_do_not_touch_pyplot_or_global_settings() -> None:
    # (``dict(rcParams)`` itself would import pyplot to resolve the backend; a copy does not.)
    code = ("import matplotlib; before = dict(matplotlib.rcParams.copy()); "
            "from rankproof.report import plots; import sys; "
            "plots.delta_plot([0.1, -0.2], higher_is_better=True, title='t', id_prefix='a-'); "
            "print('matplotlib.pyplot' in sys.modules, "
            "dict(matplotlib.rcParams.copy()) == before)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


def test_importing_plots_does_not_import_matplotlib() -> None:
    code = "import sys, rankproof.report.plots; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
