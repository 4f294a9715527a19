"""``rankproof serve`` for real: uvicorn on 127.0.0.1 over the planted store (SQLite and
PostgreSQL), read in headless Chromium. The trend page marks the planted drop, the query
page names the planted commit, writes are refused, and no script from stored content runs."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from tests.history._planted import (
    DROP_AT,
    LOST_AT,
    LOST_QID,
    RUN_NAME,
    Planted,
    write_inputs,
    write_run,
)

HOSTILE = "<img/src=x/onerror=window.__pwned=1><script>window.__pwned=2</script>[b]x"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(planted_store: tuple[str, Planted], tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[str, Planted]]:
    """The dashboard over the planted store plus one result with a hostile run name."""
    import uvicorn

    from rankproof.web import create_app

    url, planted = planted_store
    folder = tmp_path_factory.mktemp("hostile")
    qrels, run = write_inputs(folder), write_run(folder, 1, name=HOSTILE)
    out = folder / "hostile.json"
    got = CliRunner().invoke(app, ["measure", str(qrels), str(run), "-m", "nDCG@10", "-f",
                                   "json", "-o", str(out), "--history", url])
    assert got.exit_code == 0, got.output
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(url), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():  # readiness, not a timed assertion
        threading.Event().wait(0.05)
    assert server.started
    try:
        yield f"http://127.0.0.1:{port}", planted
    finally:
        server.should_exit = True
        thread.join()


def test_pages_are_read_only_and_escaped(served: tuple[str, Planted]) -> None:
    base, _ = served
    with httpx.Client(base_url=base) as client:
        listing = client.get("/")
        assert listing.status_code == 200
        assert "script-src 'none'" in listing.headers["content-security-policy"]
        assert "<script>window.__pwned" not in listing.text
        assert "&lt;script&gt;window.__pwned=2&lt;/script&gt;" in listing.text
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            assert client.request(method, "/").status_code == 405
        assert client.get("/result/ffffffffffff").status_code == 404


def test_the_trend_page_marks_the_planted_drop(served: tuple[str, Planted],
                                               browser: object) -> None:
    from selenium.webdriver.common.by import By

    base, planted = served
    browser.get(f"{base}/trend?measure=nDCG@10&run={RUN_NAME}")  # type: ignore[attr-defined]
    marked = browser.find_elements(By.CSS_SELECTOR, "tr.worse")  # type: ignore[attr-defined]
    assert [m.get_attribute("data-index") for m in marked] == [str(DROP_AT)]
    cells = marked[0].find_elements(By.TAG_NAME, "td")
    assert cells[0].text == str(DROP_AT) and "▼ worse" in marked[0].text
    assert cells[1].text == planted.commits[DROP_AT - 1][:12]
    assert not browser.find_elements(By.CSS_SELECTOR, "tr.better")  # type: ignore[attr-defined]
    assert browser.find_elements(By.CSS_SELECTOR, "figure svg")  # type: ignore[attr-defined]


def test_the_query_page_names_the_planted_commit(served: tuple[str, Planted],
                                                 browser: object) -> None:
    from selenium.webdriver.common.by import By

    base, planted = served
    browser.get(f"{base}/query/{LOST_QID}?measure=nDCG@10&run={RUN_NAME}")  # type: ignore[attr-defined]
    answer = browser.find_element(By.ID, "since")  # type: ignore[attr-defined]
    assert f"#{LOST_AT}" in answer.text
    assert answer.find_element(By.CLASS_NAME, "commit").text == planted.commits[LOST_AT - 1]


def test_no_script_from_stored_content_runs(served: tuple[str, Planted], browser: object,
                                            tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    base, _ = served
    browser.get(f"{base}/?run={HOSTILE.replace('&', '%26')}")  # type: ignore[attr-defined]
    link = browser.find_element(By.CSS_SELECTOR, "tbody tr td a")  # type: ignore[attr-defined]
    assert HOSTILE in browser.page_source.replace("&lt;", "<").replace("&gt;", ">")  # type: ignore[attr-defined]
    assert browser.execute_script("return window.__pwned === undefined")  # type: ignore[attr-defined]
    link.click()  # the stored result's report view
    assert "measure" in browser.title.lower() or browser.title  # type: ignore[attr-defined]
    assert browser.execute_script("return window.__pwned === undefined")  # type: ignore[attr-defined]
    browser.get(f"{base}/compare?a={_first(base)}&b={_first(base)}")  # type: ignore[attr-defined]
    assert browser.execute_script("return window.__pwned === undefined")  # type: ignore[attr-defined]


def _first(base: str) -> str:
    import re

    page = httpx.get(f"{base}/").text
    return re.findall(r'href="/result/([0-9a-f]+)"', page)[0]


def test_the_serve_command_binds_localhost(planted_store: tuple[str, Planted]) -> None:
    import subprocess
    import sys

    url, _ = planted_store
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rankproof", "serve", "--history", url,
                             "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        page = None
        while page is None and proc.poll() is None:  # readiness, not a timed assertion
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/trend?measure=nDCG@10&run="
                                 f"{RUN_NAME}")
            except httpx.TransportError:
                threading.Event().wait(0.1)
        assert page is not None, proc.communicate()[1]
        assert page.status_code == 200 and 'class="worse"' in page.text
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert "serving the history at http://127.0.0.1:" in proc.communicate()[1]
