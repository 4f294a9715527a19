"""Discovery cases and what is searched: files, catalogues, searchers, one retrieval pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankproof import ConfigError, InputError
from rankproof.discovery import (
    CallableSearcher,
    Catalog,
    CatalogItem,
    CatalogSearcher,
    DiscoveryCase,
    as_searcher,
    callable_name,
    check_cases,
    import_callable,
    load_cases,
    load_catalog,
    read_meta,
    retrieve,
    save_cases,
    to_qrels,
    validate_cases,
)
from rankproof.retrieval import HashingEmbedder

CATALOG = Catalog((
    CatalogItem("s3-ingest", "S3 ingest", "Load files from object storage buckets into tables"),
    CatalogItem("dq-rules", "Quality rules", "Check data quality rules on every load",
                ("quality",)),
    CatalogItem("scheduler", "Scheduler", "Run jobs on a cron schedule"),
))


def test_a_case_is_validated_and_round_trips() -> None:
    case = DiscoveryCase("load my parquet files", "s3-ingest")  # a bare string is one id
    assert case.gold == ("s3-ingest",) and not case.gold_is_none
    assert DiscoveryCase.from_dict(case.to_dict()) == case
    assert case.to_dict() == {"query": "load my parquet files", "gold": ["s3-ingest"]}
    none = DiscoveryCase.from_dict({"query": "book a room", "gold": None})
    assert none.gold_is_none and none.to_dict() == {"query": "book a room", "gold": []}
    with pytest.raises(InputError, match="non-empty query"):
        DiscoveryCase("  ")
    with pytest.raises(InputError, match="twice"):
        DiscoveryCase("q", ("a", "a"))


def test_cases_file_round_trip_with_meta(tmp_path: Path) -> None:
    cases = [DiscoveryCase("load files", ("s3-ingest",), metadata={"category": "normal"}),
             DiscoveryCase("book a room")]
    path = tmp_path / "cases.jsonl"
    save_cases(cases, path, meta={"catalog": "tools", "version": 3})
    assert load_cases(path) == cases
    assert read_meta(path) == {"catalog": "tools", "version": 3}
    assert json.loads(path.read_text().splitlines()[0]) == {"__meta__": {"catalog": "tools",
                                                                         "version": 3}}


@pytest.mark.parametrize(("lines", "fragment"), [
    (['{"__meta__": [1, 2]}', '{"query": "x", "gold": "a"}'], "line 1, field '__meta__'"),
    (['{"__meta__": {}, "query": "x"}'], "line 1, field '__meta__'"),
    (['{"query": "x", "gold": "a"}', '{"__meta__": {}}'], "line 2, field '__meta__'"),
    (['{"query": "x", "gold": 3}'], "line 1, field 'gold'"),
    (['{"query": "x", "golds": ["a"]}'], "line 1, field 'golds'"),
    (['{"query": "", "gold": ["a"]}'], "line 1, field 'query'"),
    (['{"query": "x"}', "{not json"], "line 2"),
    (['{"__meta__": {"a": 1}}'], "holds no cases"),
])
def test_bad_case_files_are_refused_by_line_and_field(tmp_path: Path, lines: list[str],
                                                      fragment: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        load_cases(path)
    assert str(path) in str(info.value) and fragment in str(info.value)


def test_unknown_gold_ids_are_found_and_refused() -> None:
    cases = [DiscoveryCase("a", "s3-ingest"), DiscoveryCase("b", ("nope", "dq-rules")),
             DiscoveryCase("c")]
    assert validate_cases(CATALOG.ids, cases) == {1: ["nope"]}
    with pytest.raises(InputError, match=r"1 case\(s\) name gold ids.*case 1.*nope"):
        check_cases(CATALOG.ids, cases)


def test_to_qrels_skips_abstention_cases_and_keeps_positional_ids() -> None:
    cases = [DiscoveryCase("a", "s3-ingest"), DiscoveryCase("none"),
             DiscoveryCase("c", ("dq-rules", "scheduler"))]
    queries, qrels = to_qrels(cases)
    assert queries == {"q0": "a", "q2": "c"}
    assert qrels.to_dict() == {"q0": {"s3-ingest": 1}, "q2": {"dq-rules": 1, "scheduler": 1}}
    with pytest.raises(InputError, match="every case is an abstention case"):
        to_qrels([DiscoveryCase("none")])


def test_catalogues_from_a_folder_and_from_jsonl(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "s3-ingest.md").write_text("# S3 ingest\nLoad files from buckets.\n")
    (folder / "scheduler.txt").write_text("Scheduler\nRun jobs on a cron schedule.\n")
    (folder / "notes.csv").write_text("ignored")
    cat = load_catalog(folder)
    assert cat.ids == ("s3-ingest", "scheduler") and cat.get("s3-ingest").title == "S3 ingest"
    jsonl = tmp_path / "tools.jsonl"
    jsonl.write_text("\n".join(json.dumps(i.to_dict()) for i in CATALOG.items) + "\n")
    again = load_catalog(jsonl, name="catalog")
    assert again.ids == CATALOG.ids and again.digest == CATALOG.digest
    jsonl.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n')
    with pytest.raises(InputError, match="lists id 'a' twice"):
        load_catalog(jsonl)
    jsonl.write_text('{"id": "a", "body": "x"}\n')
    with pytest.raises(InputError, match="line 1, field 'body'"):
        load_catalog(jsonl)
    with pytest.raises(InputError, match=r"no \.txt or \.md files"):
        load_catalog(_empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    empty = tmp_path / "empty"
    empty.mkdir()
    return empty


def test_the_digest_changes_with_any_field() -> None:
    changed = Catalog((*CATALOG.items[:2], CatalogItem("scheduler", "Scheduler", "Run jobs")))
    assert changed.digest != CATALOG.digest


def test_catalog_searcher_modes_and_one_pass() -> None:
    bm25 = CatalogSearcher(CATALOG, mode="bm25")
    [first, second] = retrieve(bm25, ["quality rules", "cron jobs"], 2)
    assert first[0][0] == "dq-rules" and second[0][0] == "scheduler"
    assert bm25.calls == 1 and not bm25.degraded
    assert bm25.identity == {"kind": "catalog", "catalog": "catalog", "digest": CATALOG.digest,
                             "size": 3, "mode": "bm25", "embedder": None, "rerank": None}
    hybrid = as_searcher(CATALOG, mode="hybrid", embedder=HashingEmbedder())
    [ranking] = retrieve(hybrid, ["quality rules"], 3)
    assert len(ranking) == 3 and hybrid.degraded
    assert any("hashing embedder" in n for n in hybrid.notes)
    with pytest.raises(ConfigError, match="mode must be one of bm25, dense, hybrid"):
        CatalogSearcher(CATALOG, mode="lexical")


def _service(query: str, k: int) -> list[tuple[str, float]]:
    return [("dq-rules", 2.0), ("s3-ingest", 1.0), ("scheduler", 1.0)][:k]


def test_callable_searchers_check_what_they_get() -> None:
    s = as_searcher(_service)
    assert isinstance(s, CallableSearcher)
    assert s.identity == {"kind": "callable", "callable": callable_name(_service),
                          "version": None, "mode": "callable"}
    assert retrieve(s, ["anything"], 2) == [(("dq-rules", 2.0), ("s3-ingest", 1.0))]
    bad = {
        "not best first": lambda q, k: [("a", 1.0), ("b", 2.0)],
        "returned twice": lambda q, k: [("a", 2.0), ("a", 1.0)],
        "finite numbers": lambda q, k: [("a", float("nan"))],
        "pair": lambda q, k: ["a"],
        "list of": lambda q, k: "a",
    }
    for fragment, fn in bad.items():
        with pytest.raises(InputError, match=fragment):
            retrieve(CallableSearcher(fn), ["q"], 3)


def test_import_callable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mysearch.py").write_text(
        "def search(query, k):\n    return [('dq-rules', 1.0)]\n")
    monkeypatch.chdir(tmp_path)
    fn = import_callable("mysearch:search")
    assert fn("x", 1) == [("dq-rules", 1.0)]
    for spec, fragment in (("mysearch", "MODULE:CALLABLE"), ("nosuch:fn", "cannot import"),
                           ("mysearch:missing", "has no 'missing'")):
        with pytest.raises(ConfigError, match=fragment):
            import_callable(spec)


def test_a_batch_where_bm25_finds_nothing_still_gets_dense_results_in_hybrid() -> None:
    """bm25 refuses a batch in which no query shares a word with the catalogue; fusion then
    fuses what dense found instead of failing, and bm25 mode reports empty rankings."""
    hybrid = CatalogSearcher(CATALOG, mode="hybrid", embedder=HashingEmbedder())
    [ranking] = retrieve(hybrid, ["zzz qqq"], 2)
    assert len(ranking) == 2
    assert retrieve(CatalogSearcher(CATALOG, mode="bm25"), ["zzz qqq"], 2) == [()]
