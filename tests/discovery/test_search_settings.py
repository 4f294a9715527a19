"""Search settings per call and per label, the curve's indexing strategy, the report's limit."""

from __future__ import annotations

import pytest

from rankproof import ConfigError, InputError
from rankproof.discovery import (
    EXAMPLE_CASES,
    EXAMPLE_CATALOG,
    EXAMPLE_THEMES,
    SURFACES,
    Catalog,
    CatalogItem,
    CatalogSearcher,
    SearchSettings,
    compare_indexings,
    distractor_curve_from_cases,
    evaluate_discovery,
    load_cases,
    load_catalog,
    load_package_cases,
    read_package_meta,
    retrieval_report,
)


def test_settings_are_validated_once_with_messages() -> None:
    assert SearchSettings().changed() == {}
    assert SearchSettings(surfaces=("tags", "title", "tags")).surfaces == ("title", "tags")
    with pytest.raises(ConfigError, match="non-empty subset of title, text, tags"):
        SearchSettings(surfaces=("body",))
    with pytest.raises(ConfigError, match="surfaces must be a list"):
        SearchSettings(surfaces="title")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="rrf_k must be a non-negative number"):
        SearchSettings(rrf_k=float("nan"))
    with pytest.raises(ConfigError, match="depth must be a positive integer"):
        SearchSettings(depth=0)
    with pytest.raises(ConfigError, match=r"unknown search setting.*bm25_k1"):
        SearchSettings.of({"bm25_k1": 1.2})
    merged = SearchSettings(rrf_k=10).merged({"surfaces": ["text"]})
    assert merged == SearchSettings(surfaces=("text",), rrf_k=10.0)
    assert merged.changed() == {"surfaces": ["text"], "rrf_k": 10.0}
    assert SURFACES == ("title", "text", "tags")


def test_surfaces_choose_what_is_indexed() -> None:
    item = CatalogItem("a", title="Loader", text="moves rows", tags=("etl",))
    assert item.document_of(("text",)) == "moves rows"
    assert item.document_of(None) == item.document == "Loader\nmoves rows\netl"
    cat = Catalog((item, CatalogItem("b", title="Only a title")))
    assert cat.docs(("tags",)) == [("a", "etl"), ("b", "b")]  # nothing there: its id
    hits = CatalogSearcher(cat, mode="bm25", surfaces=("text",)).search_many(["rows"], 2)
    assert hits[0][0][0] == "a"
    assert CatalogSearcher(cat, mode="bm25", surfaces=("title",)).search_many(["rows"], 2) \
        == [()]


def test_identity_records_only_settings_that_differ() -> None:
    cat = load_catalog(EXAMPLE_CATALOG)
    assert "search" not in CatalogSearcher(cat, mode="bm25").identity
    assert "search" not in CatalogSearcher(cat, mode="bm25", rrf_k=5).identity  # unused here
    ident = CatalogSearcher(cat, mode="bm25", surfaces=("title",)).identity
    assert ident["search"] == {"surfaces": ["title"]}


def test_per_call_settings_and_limit() -> None:
    cases = load_cases(EXAMPLE_CASES)
    whole = retrieval_report(EXAMPLE_CATALOG, cases, mode="bm25")
    titles = retrieval_report(EXAMPLE_CATALOG, cases, mode="bm25",
                              search={"surfaces": ["title"]})
    assert titles.identity["search"] == {"surfaces": ["title"]}
    assert titles.primary != whole.primary
    report = evaluate_discovery(EXAMPLE_CATALOG, cases, mode="bm25",
                                search=SearchSettings(surfaces=("title",)))
    assert report.primary == pytest.approx(titles.primary)
    deep = retrieval_report(EXAMPLE_CATALOG, cases, mode="bm25", k_values=(1, 5), limit=100)
    shallow = retrieval_report(EXAMPLE_CATALOG, cases, mode="bm25", k_values=(1, 5))
    assert deep.metrics["nDCG@5"] == pytest.approx(shallow.metrics["nDCG@5"])
    assert deep.metrics["RR@5"] == pytest.approx(shallow.metrics["RR@5"])
    with pytest.raises(InputError, match="limit must be a positive integer"):
        retrieval_report(EXAMPLE_CATALOG, cases, mode="bm25", limit=True)  # type: ignore[arg-type]


def test_search_by_label_compares_search_configurations() -> None:
    meta = read_package_meta(EXAMPLE_THEMES)
    pcs = load_package_cases(EXAMPLE_THEMES)
    report = compare_indexings({"whole": EXAMPLE_CATALOG, "titles": EXAMPLE_CATALOG}, pcs,
                               themes=meta["themes"], probes=meta["probes"], mode="bm25",
                               search_by_label={"titles": {"surfaces": ["title"]}})
    assert "search" not in report.identities["whole"]
    assert report.identities["titles"]["search"] == {"surfaces": ["title"]}
    assert report.metrics["whole"] != report.metrics["titles"]
    with pytest.raises(InputError, match=r"search_by_label names label.*nope"):
        compare_indexings({"a": EXAMPLE_CATALOG, "b": EXAMPLE_CATALOG}, pcs,
                          themes=meta["themes"], probes=meta["probes"], mode="bm25",
                          search_by_label={"nope": {}})


def test_the_curve_indexes_with_the_strategy_given() -> None:
    cases = load_cases(EXAMPLE_CASES)
    whole = distractor_curve_from_cases(EXAMPLE_CATALOG, cases, mode="bm25", sizes=(1, 8),
                                        trials=2)
    tags = distractor_curve_from_cases(EXAMPLE_CATALOG, cases, mode="bm25", sizes=(1, 8),
                                       trials=2, search={"surfaces": ["tags"]})
    assert tags.identity["search"] == {"surfaces": ["tags"]}
    assert tags.accuracy()[8] != whole.accuracy()[8]
    searcher = CatalogSearcher(load_catalog(EXAMPLE_CATALOG), mode="bm25", surfaces=("tags",))
    again = distractor_curve_from_cases(searcher, cases, sizes=(1, 8), trials=2)
    assert again.accuracy() == tags.accuracy()
