"""The regression browser on a deeply judged collection: a real TREC DL 2019 comparison
(BM25 against SPLADE++, top-100 runs from rank_llm, 43 topics with 4–341 relevant passages
each), rendered by ``rankproof report --html`` and read in headless Chromium at 1280 × 800.

Per query the browser shows the gold documents either system retrieved in its top 10 (grade
and rank in each), the rest as one count, both top-10 lists side by side with grade badges,
sortable by Δ; no table cell may overflow its box. The screenshot is kept in
``$RANKPROOF_SCREENSHOTS`` when set (docs/images/regression-browser-dl19.png came from it).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.report._browser import (
    assert_offline,
    browser,  # noqa: F401  (the fixture)
)
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.report._html_browser import gold_found, rest_text
from rankproof.report.document import read
from rankproof.report.html import STATIC_ROWS, render_html
from rankproof.report.views import build

runner = CliRunner()
K = 10
SCREENSHOTS = "RANKPROOF_SCREENSHOTS"


@pytest.fixture(scope="module")
def dl19(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``rankproof compare`` of two real DL19 runs (JSON with evidence), and its HTML report
    written by ``rankproof report --html``."""
    runs = shared_data / "rankllm_runs"
    out = tmp_path_factory.mktemp("dl19")
    doc, page = out / "cmp.json", out / "cmp.html"
    result = runner.invoke(app, [
        "compare", str(shared_data / "trec_dl" / "qrels.dl19-passage.txt"),
        str(runs / "BM25" / "trec_results_dl19.txt"),
        str(runs / "SPLADE_P_P_ENSEMBLE_DISTIL" / "trec_results_dl19.txt"),
        "-m", "nDCG@10", "-m", "AP", "--resamples", "1000", "--evidence-depth", str(K),
        "--queries", str(shared_data / "trec_dl" / "topics.dl19-passage.txt"),
        "--name", "BM25", "--name", "SPLADE++", "-f", "json", "-o", str(doc)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["report", str(doc), "--html", str(page)])
    assert result.exit_code == 0, result.output
    return doc, page


def _evidence(doc: Path) -> dict[str, Any]:
    ev: dict[str, Any] = json.loads(doc.read_text(encoding="utf-8"))["evidence"]
    return ev


def _deltas(doc: Path) -> dict[str, float]:
    """Per query, SPLADE++ − BM25 on nDCG@10, from the comparison's own row."""
    row = next(r for r in json.loads(doc.read_text(encoding="utf-8"))["rows"]
               if r["measure"] == "nDCG@10")
    return {q: c - b for q, b, c in zip(row["qids"], row["baseline_values"],
                                        row["candidate_values"], strict=True)}


def test_the_collection_is_deeply_judged(dl19: tuple[Path, Path]) -> None:
    ev = _evidence(dl19[0])
    sizes = sorted(len(g) for g in ev["gold"].values())
    assert len(sizes) == 43 and sizes[-1] > 200 and sizes[len(sizes) // 2] > 60


def test_gold_found_splits_the_judgments_into_found_and_a_count(
        dl19: tuple[Path, Path]) -> None:
    ev = _evidence(dl19[0])
    for qid, gold in ev["gold"].items():
        base, cand = ev["top"]["BM25"].get(qid, []), ev["top"]["SPLADE++"].get(qid, [])
        found, rest = gold_found(gold, (base, cand))
        assert {d for d, _, _ in found} == set(gold) & (set(base) | set(cand))
        assert rest == len(gold) - len(found)
        for doc, grade, (rb, rc) in found:
            assert grade == gold[doc]
            assert rb == (base.index(doc) + 1 if doc in base else None)
            assert rc == (cand.index(doc) + 1 if doc in cand else None)
        grades = [g for _, g, _ in found]
        assert grades == sorted(grades, reverse=True)


def test_without_javascript_a_row_holds_what_was_found_not_every_judgment(
        dl19: tuple[Path, Path]) -> None:
    doc, _ = dl19
    ev = _evidence(doc)
    html = render_html(build(read(doc)))
    body = html.split('<tbody id="rp-rows">', 1)[1].split("</tbody>", 1)[0]
    rows = body.split("<tr ")[1:]
    assert len(rows) == min(STATIC_ROWS, len(ev["gold"]))
    for row in rows:
        qid = row.split('data-qid="', 1)[1].split('"', 1)[0]
        gold = ev["gold"][qid]
        found, rest = gold_found(gold, (ev["top"]["BM25"][qid], ev["top"]["SPLADE++"][qid]))
        gold_cell = row.split("<td class=gold>", 1)[1].split("</td>", 1)[0]
        assert gold_cell.count('<li class="rel">') == len(found) <= 2 * K
        assert (rest_text(rest, K) in gold_cell) == (rest > 0)
        topk = row.split("<td class=topk>", 1)[1].split("</td>", 1)[0]
        assert topk.count("<li>") == K
    # The largest falls first: the static page is sorted by Δ, ascending.
    deltas = [float(r.split('data-delta="', 1)[1].split('"', 1)[0]) for r in rows]
    assert deltas == sorted(deltas)


def _at_1280x800(driver: Any, page: Path) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 800, "deviceScaleFactor": 1,
                            "mobile": False})
    driver.get(page.as_uri())
    assert driver.execute_script("return [innerWidth, innerHeight];") == [1280, 800]


_OVERFLOWS = """
var bad = [];
function box(e) { return e.getBoundingClientRect(); }
document.querySelectorAll('#rp-table th, #rp-table td').forEach(function (c) {
  if (c.scrollWidth > c.clientWidth + 1 || c.scrollHeight > c.clientHeight + 1) {
    bad.push(c.className + ' ' + c.scrollWidth + '>' + c.clientWidth);
  }
  var r = box(c);
  c.querySelectorAll('*').forEach(function (e) {
    var q = box(e);
    if (q.width && (q.left < r.left - 1 || q.right > r.right + 1)) {
      bad.push(c.className + ' child ' + e.className + ' ' + q.right + '>' + r.right);
    }
  });
});
var scroll = document.getElementById('rp-scroll'), table = document.getElementById('rp-table');
return {bad: bad.slice(0, 20), cells: document.querySelectorAll('#rp-table td').length,
        table: box(table).right, container: box(scroll).right,
        scrollWidth: scroll.scrollWidth, clientWidth: scroll.clientWidth,
        section: Math.max(box(document.getElementById('browser')).right,
                          document.getElementById('browser').scrollWidth)};
"""


def _row(driver: Any, n: int = 0) -> dict[str, Any]:
    """What the n-th row shows: qid, Δ, found gold (id, grade, ranks), the rest, top k."""
    out: dict[str, Any] = driver.execute_script("""
var tr = document.querySelectorAll('#rp-rows tr')[arguments[0]];
function t(e) { return e ? e.textContent : null; }
return {
  qid: tr.dataset.qid, delta: parseFloat(tr.querySelector('td[data-delta]').dataset.delta),
  found: Array.prototype.map.call(tr.querySelectorAll('td.gold li.rel'), function (li) {
    return [t(li.querySelector('.id')), t(li.querySelector('.g')), t(li.querySelector('.rk'))];
  }),
  rest: t(tr.querySelector('td.gold li.rest')),
  top: Array.prototype.map.call(tr.querySelectorAll('td.topk li'), function (li) {
    return Array.prototype.map.call(li.querySelectorAll('.d'), function (d) {
      return [t(d.querySelector('.id')), t(d.querySelector('.g'))];
    });
  })
};""", n)
    return out


def _shown_deltas(driver: Any) -> list[float]:
    return [float(x) for x in driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#rp-rows td[data-delta]'),"
        "function(td){return td.dataset.delta;});")]


def _screenshot(driver: Any, tmp: Path) -> Path:
    driver.execute_script("document.getElementById('browser').scrollIntoView();")
    path = tmp / "regression-browser-dl19.png"
    driver.save_screenshot(str(path))
    keep = os.environ.get(SCREENSHOTS)
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def test_dl19_browser_in_chromium_at_1280x800(dl19: tuple[Path, Path], browser: Any,  # noqa: F811
                                              tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    doc, page = dl19
    ev = _evidence(doc)
    deltas = _deltas(doc)
    assert_offline(page.read_text(encoding="utf-8"))
    _at_1280x800(browser, page)
    assert [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"] == []
    assert browser.execute_script(
        "return performance.getEntriesByType('resource').length;") == 0

    # Every query on one page, the largest fall of SPLADE++ on nDCG@10 first.
    shown = _shown_deltas(browser)
    assert len(shown) == len(ev["gold"]) == 43
    assert shown == sorted(shown)
    assert shown == pytest.approx(sorted(deltas.values()), abs=2e-6)

    # Each row: exactly the found gold, grade and both ranks, the rest as a count, and the
    # two top-10 lists rank by rank with a badge on every relevant document.
    for n in range(len(shown)):
        row = _row(browser, n)
        qid = row["qid"]
        assert row["delta"] == pytest.approx(deltas[qid], abs=2e-6)
        gold, base, cand = ev["gold"][qid], ev["top"]["BM25"][qid], ev["top"]["SPLADE++"][qid]
        found, rest = gold_found(gold, (base, cand))
        assert row["found"] == [[d, str(g), " | ".join("—" if r is None else str(r)
                                                        for r in ranks)]
                                for d, g, ranks in found]
        assert row["rest"] == (rest_text(rest, K) if rest else None)
        assert row["top"] == [[[d, str(gold[d]) if d in gold else None] for d in (b, c)]
                              for b, c in zip(base, cand, strict=True)]

    # The query judged deepest shows a handful of ids and one count, not 300 ids.
    deepest = max(ev["gold"], key=lambda q: len(ev["gold"][q]))
    cell = browser.find_element(By.CSS_SELECTOR, f'#rp-rows tr[data-qid="{deepest}"] td.gold')
    assert len(cell.find_elements(By.CSS_SELECTOR, "li.rel")) <= 2 * K
    assert "judged relevant, not retrieved in either top 10" in cell.text

    # Sortable by Δ: one click, largest gains first; another, largest falls again.
    head = browser.find_element(By.CSS_SELECTOR, "#browser th[data-sort=delta]")
    head.click()
    assert _shown_deltas(browser) == sorted(shown, reverse=True)
    assert head.get_attribute("aria-sort") == "descending"
    head.click()
    assert _shown_deltas(browser) == shown
    assert head.get_attribute("aria-sort") == "ascending"

    # Nothing clipped: no cell's content is wider or taller than its box, nothing inside a
    # cell sticks out of it, and the table fits its container without scrolling.
    fit = browser.execute_script(_OVERFLOWS)
    assert fit["cells"] == 43 * 7
    assert fit["bad"] == []
    assert fit["table"] <= fit["container"] + 1
    assert fit["scrollWidth"] <= fit["clientWidth"]
    assert fit["section"] <= 1280
    assert [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"] == []
    assert _screenshot(browser, tmp_path).stat().st_size > 20_000


def test_switching_to_a_long_named_candidate_still_fits(dl19: tuple[Path, Path],
                                                        browser: Any,  # noqa: F811
                                                        tmp_path: Path) -> None:
    """Long run names and ids wrap instead of widening the table."""
    doc, _ = dl19
    data = json.loads(doc.read_text(encoding="utf-8"))
    long = "SPLADE_P_P_ENSEMBLE_DISTIL/trec_results_dl19_with_a_very_long_run_name_" * 2
    text = json.dumps(data).replace('"SPLADE++"', json.dumps(long))
    long_id = "msmarco_passage_" + "0" * 60
    first = next(iter(data["evidence"]["top"]["BM25"]))
    renamed = json.loads(text)
    renamed["evidence"]["top"]["BM25"][first][0] = long_id
    src = tmp_path / "long.json"
    src.write_text(json.dumps(renamed), encoding="utf-8")
    page = tmp_path / "long.html"
    page.write_text(render_html(build(read(src))), encoding="utf-8")
    _at_1280x800(browser, page)
    fit = browser.execute_script(_OVERFLOWS)
    assert fit["bad"] == []
    assert fit["scrollWidth"] <= fit["clientWidth"] and fit["section"] <= 1280
    assert browser.execute_script(
        "return document.getElementById('rp-cand-head').textContent;") == long
    # The whole page too: the systems x measures table and the verdict tables scroll in
    # their own boxes instead of widening the page past the window.
    assert browser.execute_script("return document.documentElement.scrollWidth;") <= 1280


def test_without_javascript_the_first_page_fits_too(dl19: tuple[Path, Path],
                                                    browser: Any) -> None:  # noqa: F811
    """The server-rendered rows (the page's script off) have the same layout and fit too."""
    _, page = dl19
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        _at_1280x800(browser, page)
        state = browser.execute_script(
            "return [document.querySelectorAll('#rp-rows tr').length,"
            "document.getElementById('rp-controls').hidden,"
            "document.getElementById('rp-static-note').hidden];")
        assert state == [43, True, False]  # the page's script did not run
        fit = browser.execute_script(_OVERFLOWS)
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
    assert fit["cells"] == 43 * 7 and fit["bad"] == []
    assert fit["scrollWidth"] <= fit["clientWidth"] and fit["section"] <= 1280
