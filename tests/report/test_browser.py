"""The HTML report in a real headless Chromium: every section, no console errors, nothing
fetched, and the regression browser's sorting, filtering and paging actually work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.harness._golden import golden_report
from tests.report._browser import (
    assert_offline,
    browser,  # noqa: F401  (the fixture)
)

from rankproof.report.document import read
from rankproof.report.html import STATIC_ROWS, render_html
from rankproof.report.views import build

FIXTURES = Path(__file__).parent / "fixtures"
SCREENSHOTS = "RANKPROOF_SCREENSHOTS"


def _eval_report(tmp: Path) -> Path:
    path = tmp / "eval.json"
    path.write_text(golden_report(2000).model_dump_json(), encoding="utf-8")
    return path


def _open(driver: Any, html_path: Path) -> None:
    driver.get(html_path.as_uri())
    driver.get_log("browser")  # what loading said is checked by the caller


def _render(doc: Path, out: Path) -> Path:
    out.write_text(render_html(build(read(doc))), encoding="utf-8")
    return out


def _errors(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def _screenshot(driver: Any, name: str, tmp: Path) -> Path:
    """Saved per report kind under tmp (and in $RANKPROOF_SCREENSHOTS when set)."""
    import os

    path = tmp / f"{name}.png"
    driver.save_screenshot(str(path))
    keep = os.environ.get(SCREENSHOTS)
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def _sections(driver: Any) -> set[str]:
    from selenium.webdriver.common.by import By

    return {s.get_attribute("id") for s in driver.find_elements(By.CSS_SELECTOR, "section")}


def _resources(driver: Any) -> list[str]:
    return list(driver.execute_script(
        "return performance.getEntriesByType('resource').map(function(e){return e.name;});"))


KINDS = {
    "eval": {"summary", "verdicts", "forest", "deltas", "latency", "tables", "browser",
             "caveats", "provenance"},
    "cmp": {"summary", "verdicts", "forest", "deltas", "browser", "caveats", "provenance"},
    "gate": {"summary", "verdicts", "forest", "deltas", "tables", "caveats", "provenance"},
    "rag": {"summary", "bars", "tables", "caveats", "provenance"},
    "discovery": {"summary", "bars", "curves", "tables", "caveats", "provenance"},
    "measure": {"summary", "tables", "browser", "caveats", "provenance"},
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_opens_without_errors_or_fetches(kind: str, browser: Any,  # noqa: F811
                                                    tmp_path: Path) -> None:
    src = _eval_report(tmp_path) if kind == "eval" else FIXTURES / f"{kind}.json"
    page = _render(src, tmp_path / f"{kind}.html")
    assert_offline(page.read_text(encoding="utf-8"))
    _open(browser, page)
    browser.get(page.as_uri())
    assert _errors(browser) == []
    assert KINDS[kind] <= _sections(browser)
    assert _resources(browser) == []  # nothing fetched: not even a favicon or a font
    svgs = browser.execute_script("return document.querySelectorAll('figure svg').length;")
    assert svgs >= (1 if kind != "measure" else 0)
    assert _screenshot(browser, f"report-{kind}", tmp_path).stat().st_size > 10_000


def _rows(driver: Any) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, "#rp-rows tr")


def _deltas(driver: Any) -> list[float]:
    from selenium.webdriver.common.by import By

    return [float(td.get_attribute("data-delta"))
            for td in driver.find_elements(By.CSS_SELECTOR, "#rp-rows td[data-delta]")]


def test_the_regression_browser_sorts_filters_and_pages(browser: Any,  # noqa: F811
                                                        tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    doc = _eval_report(tmp_path)
    report = json.loads(doc.read_text())
    page = _render(doc, tmp_path / "eval.html")
    browser.get(page.as_uri())
    assert _errors(browser) == []
    assert browser.find_element(By.ID, "rp-controls").is_displayed()
    assert not browser.find_element(By.ID, "rp-static-note").is_displayed()
    rows = _rows(browser)
    scored = len(report["stages"][0]["per_query"])
    assert len(rows) == min(STATIC_ROWS, scored)
    # Default order: the first candidate's largest falls first (higher is better here).
    deltas = _deltas(browser)
    assert deltas == sorted(deltas)
    # The deltas shown are the report's own per-query differences.
    first_measure = report["measures"][0]
    cand = report["stages"][1]
    base = report["stages"][0]
    qid = rows[0].get_attribute("data-qid")
    expected = cand["per_query"][qid][first_measure] - base["per_query"][qid][first_measure]
    assert deltas[0] == pytest.approx(expected, abs=1e-4)

    # Clicking the Δ header (the current order) reverses it: largest gains first.
    browser.find_element(By.CSS_SELECTOR, "#browser th[data-sort=delta]").click()
    reversed_ = _deltas(browser)
    assert reversed_ == sorted(reversed_, reverse=True)
    # Sorting by qid.
    browser.find_element(By.CSS_SELECTOR, "#browser th[data-sort=qid]").click()
    qids = [r.get_attribute("data-qid") for r in _rows(browser)]
    assert qids == sorted(qids)

    # Filtering by query text narrows to the matching queries.
    texts = report["evidence"]["queries"]
    target_qid, target_text = next(iter(sorted(texts.items())))
    box = browser.find_element(By.ID, "rp-filter")
    box.send_keys(target_text[:30])
    shown = [r.get_attribute("data-qid") for r in _rows(browser)]
    assert target_qid in shown
    assert len(shown) < scored
    assert all(target_text[:30].lower() in (texts.get(q) or "").lower() + q.lower()
               for q in shown)
    box.clear()
    box.send_keys("no query has this text 9f8e7d")
    assert _rows(browser) == []

    # Regressions only, on the other candidate: every row shown fell.
    browser.execute_script("var e=document.getElementById('rp-filter');e.value='';"
                           "e.dispatchEvent(new Event('input'));")
    Select(browser.find_element(By.ID, "rp-candidate")).select_by_visible_text(
        report["stages"][2]["name"])
    browser.find_element(By.ID, "rp-regressions").click()
    fell = _deltas(browser)
    assert fell and all(d < 0 for d in fell)
    # Relevant results are marked in the top lists.
    assert browser.find_elements(By.CSS_SELECTOR, "#rp-rows li.rel")
    assert _errors(browser) == []


def test_without_javascript_the_first_page_is_there(tmp_path: Path) -> None:
    """The static table (what a reader with JavaScript off sees) holds the largest falls."""
    doc = _eval_report(tmp_path)
    html = render_html(build(read(doc)))
    body = html.split('<tbody id="rp-rows">', 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr") == min(STATIC_ROWS,
                                    len(json.loads(doc.read_text())["stages"][0]["per_query"]))
    assert 'class="rel"' in body
