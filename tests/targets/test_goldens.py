"""Golden sets: round trips per format and one test per refusal rule."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from rankproof import InputError
from rankproof.targets import Case, load_goldens, register_loader
from rankproof.targets._goldens import _unregister_loader

CASES = (
    Case(id="boil-1", query="do I need to boil tap water?", relevant=("boil-water-advisory",),
         tags=("normal", "safety")),
    Case(id="rates-2", query="residential rates, 2024", relevance={"billing-rates": 2,
                                                                   "billing-archived": 0}),
    Case(id="none-3", query="who won the football?", relevance={}, tags=("no_answer",)),
    Case(id="unjudged-4", query="latency probe", meta={"owner": "ops", "n": 3}),
)


def _row(case: Case) -> dict[str, Any]:
    row: dict[str, Any] = {"id": case.id, "query": case.query}
    if case.judged:
        grades = dict(case.relevance or {})
        if all(g == 1 for g in grades.values()) and grades:
            row["relevant"] = list(case.relevant)
        else:
            row["relevance"] = grades
    if case.tags:
        row["tags"] = list(case.tags)
    if case.meta:
        row["meta"] = dict(case.meta)
    return row


# -- round trips -----------------------------------------------------------------


def test_jsonl_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    lines = [json.dumps(_row(c)) for c in CASES]
    path.write_text(lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n", encoding="utf-8")
    loaded = load_goldens(path)
    assert loaded == CASES
    assert [c.judged for c in loaded] == [True, True, True, False]
    assert loaded[1].relevant == ("billing-rates",)
    assert loaded[2].relevant == () and loaded[2].judged


@pytest.mark.parametrize("wrapped", [False, True])
@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_yaml_round_trip(tmp_path: Path, wrapped: bool, suffix: str) -> None:
    path = tmp_path / f"golden{suffix}"
    rows = [_row(c) for c in CASES]
    path.write_text(yaml.safe_dump({"cases": rows} if wrapped else rows, sort_keys=False),
                    encoding="utf-8")
    assert load_goldens(str(path)) == CASES


def test_csv_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "golden.csv"
    binary = (CASES[0], Case(id="q-5", query='a "quoted",\nmulti-line query',
                             relevant=("d1", "d2"), tags=("x",)), CASES[3])
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "query", "relevant", "tags"])
        for c in binary:
            writer.writerow([c.id, c.query, ";".join(c.relevant), ";".join(c.tags)])
    loaded = load_goldens(path)
    assert loaded == tuple(Case(id=c.id, query=c.query, relevant=c.relevant, tags=c.tags)
                           for c in binary)
    assert not loaded[2].judged  # an empty relevant cell: no judgments


def test_csv_with_bom_spaces_and_minimal_columns(tmp_path: Path) -> None:
    path = tmp_path / "golden.CSV"
    path.write_bytes("\ufeffquery,id\nfirst query, q1 \n".encode())
    assert load_goldens(path) == (Case(id="q1", query="first query"),)


# -- refusals: zero cases --------------------------------------------------------


@pytest.mark.parametrize(("name", "text"), [
    ("empty.jsonl", "\n\n"),
    ("empty.yaml", ""),
    ("list.yaml", "[]\n"),
    ("wrapped.yaml", "cases: []\n"),
    ("null.yaml", "cases:\n"),
    ("header-only.csv", "id,query,relevant\n"),
    ("empty.csv", ""),
])
def test_zero_cases_is_refused(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="has no cases") as err:
        load_goldens(path)
    assert err.value.path == str(path)


# -- refusals: duplicate ids -----------------------------------------------------


def test_duplicate_id_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "a", "query": "x"}\n{"id": "b", "query": "y"}\n\n'
                    '{"id": "a", "query": "z"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"duplicate case id 'a' \(first on line 1\)") as err:
        load_goldens(path)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), 4, "id")


def test_duplicate_id_yaml_names_the_item_line(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text("cases:\n  - id: a\n    query: x\n  - id: b\n    query: y\n"
                    "  - id: a\n    query: z\n", encoding="utf-8")
    with pytest.raises(InputError, match="duplicate case id 'a' \\(first on line 2\\)") as err:
        load_goldens(path)
    assert (err.value.line, err.value.field) == (6, "id")


def test_duplicate_id_csv(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text("id,query\na,x\nb,\"two\nlines\"\na,z\n", encoding="utf-8")
    with pytest.raises(InputError, match="duplicate case id 'a'") as err:
        load_goldens(path)
    assert err.value.line == 5  # the quoted query spans lines 3-4


# -- refusals: malformed rows ----------------------------------------------------


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    ('{"id": "a", "query": "x"}\n{"id": "b", "query": \n', 2, None, "invalid JSON: "),
    ('["a", "x"]\n', 1, None, "expected a JSON object, found an array"),
    ('{"id": "a", "query": "x", "relevent": ["d"]}\n', 1, "relevent", "unknown key 'relevent'"),
    ('{"query": "x"}\n', 1, "id", "missing required key 'id'"),
    ('{"id": 12, "query": "x"}\n', 1, "id", "found int 12 (quote it)"),
    ('{"id": "a", "query": "x", "relevant": "d1"}\n', 1, "relevant", "found str 'd1'"),
    ('{"id": "a", "query": "x", "relevance": {"d": "2"}}\n', 1, "relevance",
     "grade of 'd' must be an integer"),
    ('{"id": "a", "query": "x", "relevant": ["d"], "relevance": {"d": 1}}\n', 1, "relevance",
     "not both"),
    ('{"id": "a", "query": "x", "tags": [1]}\n', 1, "tags", "item 1 must be a string"),
])
def test_malformed_jsonl_row(tmp_path: Path, text: str, line: int, field: str | None,
                             message: str) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_goldens(path)
    assert message in str(err.value)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), line, field)
    assert f"line {line}" in str(err.value)


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    # the offending key's own line, inside the item that starts on line 4
    ("- id: a\n  query: x\n\n- id: b\n  query: y\n  relevance:\n    d1: high\n",
     6, "relevance", "grade of 'd1' must be an integer"),
    ("- id: a\n  query: x\n- just a string\n", 3, None, "each case must be a mapping"),
    ("- id: 001\n  query: x\n", 1, "id", "found int 1 (quote it)"),
    ("- id: a\n  query: x\n  query: y\n", 3, "query", "key 'query' appears twice"),
    ("- id: a\n  querry: x\n", 2, "querry", "unknown key 'querry'"),
    ("cases: {id: a}\n", 1, "cases", "expected a list of cases"),
    ("tests:\n  - id: a\n", 1, "tests", "unknown top-level key 'tests'"),
])
def test_malformed_yaml_item(tmp_path: Path, text: str, line: int, field: str | None,
                             message: str) -> None:
    path = tmp_path / "g.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_goldens(path)
    assert message in str(err.value)
    assert (err.value.line, err.value.field) == (line, field)


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    ("id,query\na,x\nb,y,extra\n", 3, None, "expected 2 fields (id, query), found 3"),
    ("id,query,relevant\na,x,d1;;d2\n", 2, "relevant", "item 2 of the ';'-separated list"),
    ("id,query,grade\na,x,1\n", 1, "grade", "unknown column 'grade'"),
    ("id,relevant\na,d1\n", 1, "query", "missing required column 'query'"),
    ("id,query,id\na,x,a\n", 1, "id", "column 'id' appears twice"),
    ("id,query\n,x\n", 2, "id", "case id must be a non-empty string"),
    ("id,query\na,\n", 2, "query", "query must be a non-empty string"),
])
def test_malformed_csv_row(tmp_path: Path, text: str, line: int, field: str | None,
                           message: str) -> None:
    path = tmp_path / "g.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_goldens(path)
    assert message in str(err.value)
    assert (err.value.line, err.value.field) == (line, field)


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_bytes(b'{"id": "a", "query": "x"}\n{"id": "b", "query": "\xff"}\n')
    with pytest.raises(InputError, match="invalid UTF-8") as err:
        load_goldens(path)
    assert err.value.line == 2


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read the golden set"):
        load_goldens(tmp_path / "absent.jsonl")


# -- refusals: bad YAML, unknown suffix ----------------------------------------------


def test_bad_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text("cases:\n  - id: a\n    query: [unclosed\n  - id: b\n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid YAML") as err:
        load_goldens(path)
    assert err.value.path == str(path)
    assert err.value.line is not None and 3 <= err.value.line <= 4


def test_multi_document_yaml_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text("- id: a\n  query: x\n---\n- id: b\n  query: y\n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid YAML") as err:
        load_goldens(path)
    assert err.value.line == 3


@pytest.mark.parametrize("name", ["golden.txt", "golden", "golden.json"])
def test_unknown_suffix(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="unknown golden-set format") as err:
        load_goldens(path)
    assert ".csv, .jsonl, .yaml, .yml" in str(err.value)
    assert "register_loader" in str(err.value)


# -- custom loaders --------------------------------------------------------------


@pytest.fixture
def tsv_loader() -> Iterator[None]:
    @register_loader("TSV")
    def load_tsv(path: Path) -> Iterator[Any]:
        for line in path.read_text(encoding="utf-8").splitlines():
            qid, query, rel = line.split("\t")
            if qid == "obj":
                yield Case(id=qid, query=query)
            else:
                yield {"id": qid, "query": query, "relevant": rel.split(",") if rel else []}

    try:
        yield
    finally:
        _unregister_loader(".tsv")


@pytest.mark.usefixtures("tsv_loader")
def test_custom_loader_registration(tmp_path: Path) -> None:
    path = tmp_path / "g.tsv"
    path.write_text("a\tfirst\td1,d2\nobj\tsecond\t\n", encoding="utf-8")
    assert load_goldens(path) == (Case(id="a", query="first", relevant=("d1", "d2")),
                                  Case(id="obj", query="second"))


@pytest.mark.usefixtures("tsv_loader")
def test_custom_loader_rows_are_validated_like_builtin_ones(tmp_path: Path) -> None:
    path = tmp_path / "g.tsv"
    path.write_text("a\tfirst\t\nb\tsecond\t\na\tthird\t\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"case #3: duplicate case id 'a' \(first at case #1\)"):
        load_goldens(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="has no cases"):
        load_goldens(path)
    path.write_text("a\tfirst\tbad,\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"case #1: .*empty string") as err:
        load_goldens(path)
    assert err.value.field == "relevant"


@pytest.mark.usefixtures("tsv_loader")
def test_custom_loader_failure_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "g.tsv"
    path.write_text("only-one-column\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"the \.tsv loader raised ValueError") as err:
        load_goldens(path)
    assert isinstance(err.value.__cause__, ValueError)


@pytest.mark.usefixtures("tsv_loader")
def test_duplicate_registration_raises() -> None:
    with pytest.raises(ValueError, match=r"'\.tsv' is already registered"):
        register_loader(".tsv")
    with pytest.raises(ValueError, match=r"'\.jsonl' is already registered"):
        register_loader("jsonl")
    with pytest.raises(ValueError, match=r"looks like '\.tsv'"):
        register_loader("")


def test_compound_suffix_wins_over_a_shorter_one(tmp_path: Path) -> None:
    @register_loader(".golden.csv")
    def load_special(path: Path) -> list[Case]:
        return [Case(id="special", query="x")]

    try:
        path = tmp_path / "a.golden.csv"
        path.write_text("id,query\nplain,x\n", encoding="utf-8")
        assert load_goldens(path) == (Case(id="special", query="x"),)
    finally:
        _unregister_loader(".golden.csv")
