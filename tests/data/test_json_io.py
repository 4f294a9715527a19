"""JSON (``{qid: {docid: value}}``) and JSONL (one object per line) runs and qrels."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankproof import InputError
from rankproof.data import (
    Qrels,
    Run,
    _jsondoc,
    _jsonio,
    read_json_qrels,
    read_json_run,
    read_jsonl_qrels,
    read_jsonl_run,
    write_json_qrels,
    write_json_run,
    write_jsonl_qrels,
    write_jsonl_run,
)
from rankproof.data._text import default_run_name, split_lines

SCORES = {"q1": {"d1": 3.5, "d2": 0.1 + 0.2}, "q2": {"d1": -1e-300, "d9": 2.0}}
LABELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2, "d3": -1}}


def jsonl(*rows: dict[str, object]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


# -- round trips --------------------------------------------------------------------


@pytest.mark.parametrize("indent", [None, 2])
def test_json_run_round_trip(indent, tmp_path) -> None:
    run = Run.from_dict(SCORES)
    write_json_run(run, tmp_path / "r.json", indent=indent)
    back = read_json_run(tmp_path / "r.json")
    assert back.to_dict() == SCORES
    assert back.name == "r"


def test_json_qrels_round_trip(tmp_path) -> None:
    qrels = Qrels.from_dict(LABELS)
    write_json_qrels(qrels, tmp_path / "q.json")
    assert read_json_qrels(tmp_path / "q.json").to_dict() == LABELS


def test_jsonl_run_round_trip_keeps_rank(tmp_path) -> None:
    run = Run.from_columns(["q1", "q1", "q2"], ["a", "b", "a"], [2.0, 1.0, 0.5], [1, 2, 1])
    write_jsonl_run(run, tmp_path / "r.jsonl")
    back = read_jsonl_run(tmp_path / "r.jsonl")
    assert back.to_arrow().equals(run.to_arrow())


def test_jsonl_qrels_round_trip(tmp_path) -> None:
    qrels = Qrels.from_dict(LABELS)
    write_jsonl_qrels(qrels, tmp_path / "q.jsonl")
    assert read_jsonl_qrels(tmp_path / "q.jsonl").digest == qrels.digest


def test_gz_round_trips(tmp_path) -> None:
    run = Run.from_dict(SCORES)
    write_json_run(run, tmp_path / "r.json.gz")
    write_jsonl_run(run, tmp_path / "r.jsonl.gz")
    assert read_json_run(tmp_path / "r.json.gz").to_dict() == SCORES
    assert read_jsonl_run(tmp_path / "r.jsonl.gz").to_dict() == SCORES
    assert read_json_run(tmp_path / "r.json.gz").name == "r"


def test_gzip_by_content(write) -> None:
    path = write("r.json", gzip.compress(json.dumps(SCORES).encode()))
    assert read_json_run(path).to_dict() == SCORES


def test_non_ascii_ids_round_trip(tmp_path) -> None:
    run = Run.from_dict({"qé": {"文档": 1.0, "d\u2028x": 2.0}})
    write_jsonl_run(run, tmp_path / "r.jsonl")
    write_json_run(run, tmp_path / "r.json")
    assert read_jsonl_run(tmp_path / "r.jsonl").to_dict() == run.to_dict()
    assert read_json_run(tmp_path / "r.json").to_dict() == run.to_dict()


# -- accepted spellings -------------------------------------------------------------


def test_jsonl_accepts_ir_measures_keys(write) -> None:
    path = write("r.jsonl", jsonl({"query_id": "q1", "doc_id": "d1", "score": 1.5},
                                  {"qid": "q1", "docid": "d2", "score": 1}))
    assert read_jsonl_run(path).to_dict() == {"q1": {"d1": 1.5, "d2": 1.0}}
    path = write("q.jsonl", jsonl({"query_id": "q1", "doc_id": "d1", "relevance": 2,
                                   "iteration": "0"}, {"qid": "q1", "docid": "d2", "rel": 0}))
    assert read_jsonl_qrels(path).to_dict() == {"q1": {"d1": 2, "d2": 0}}


def test_integer_ids_become_text(write) -> None:
    path = write("r.jsonl", jsonl({"qid": 301, "docid": 7, "score": 1.0}))
    assert read_jsonl_run(path).to_dict() == {"301": {"7": 1.0}}


def test_whole_float_labels_are_integers(write) -> None:
    assert read_json_qrels(write("q.json", '{"q": {"d": 2.0}}')).to_dict() == {"q": {"d": 2}}
    assert read_jsonl_qrels(write("q.jsonl", jsonl({"qid": "q", "docid": "d", "rel": 1.0}))
                            ).to_dict() == {"q": {"d": 1}}


def test_qid_listed_twice_is_merged(write) -> None:
    path = write("r.json", '{"q1": {"a": 1}, "q2": {"b": 2}, "q1": {"c": 3}}')
    assert read_json_run(path).to_dict() == {"q1": {"a": 1.0, "c": 3.0}, "q2": {"b": 2.0}}


def test_blank_lines_crlf_and_bom_in_jsonl(write) -> None:
    text = "\ufeff" + jsonl({"qid": "q", "docid": "a", "score": 1}).replace("\n", "\r\n")
    text += "\r\n   \r\n" + jsonl({"qid": "q", "docid": "b", "score": 2})
    assert read_jsonl_run(write("r.jsonl", text)).to_dict() == {"q": {"a": 1.0, "b": 2.0}}


def test_split_lines_keeps_unicode_separators() -> None:
    assert split_lines("a\u2028b\r\nc\rd\n") == ["a\u2028b", "c", "d"]


def test_default_run_name() -> None:
    assert default_run_name("/x/bm25.jsonl.gz") == "bm25"
    assert default_run_name("bm25.json") == "bm25"
    assert default_run_name(".json") == ".json"


# -- validation rules: JSON documents ----------------------------------------------


def test_invalid_json(write, located) -> None:
    path = write("r.json", '{"q1": {"d1": 1.0,\n "d2": 2.0,}\n}')
    with pytest.raises(InputError, match="invalid JSON") as err:
        read_json_run(path)
    located(err.value, path, 2, None)


def test_invalid_utf8_json(write, located) -> None:
    path = write("r.json", b'{"q1":\n {"d\xff1": 1.0}}')
    with pytest.raises(InputError, match="invalid UTF-8") as err:
        read_json_run(path)
    located(err.value, path, 2, None)


@pytest.mark.parametrize(("value", "match"), [
    ('"1.0"', "must be a number"), ("true", "must be a number"), ("null", "must be a number"),
    ("[1]", "must be a number"), ("NaN", "finite"), ("Infinity", "finite"),
    ("-Infinity", "finite"), ("1e400", "finite"),
])
def test_bad_score_in_json(value, match, write, located) -> None:
    path = write("r.json", '{"q1": {"d1": 1.0},\n "q2": {"d1": 2.0,\n   "d2": ' + value + "}}")
    with pytest.raises(InputError, match=match) as err:
        read_json_run(path)
    located(err.value, path, 3, "score")
    assert "'q2', 'd2'" in str(err.value)


@pytest.mark.parametrize("value", ["1.5", '"1"', "true", "NaN", "1e400", "99999999999999999999"])
def test_non_integer_relevance_in_json(value, write, located) -> None:
    path = write("q.json", '{"q1": {"d1": 1},\n "q2": {"d2": ' + value + "}}")
    with pytest.raises(InputError, match="relevance") as err:
        read_json_qrels(path)
    located(err.value, path, 2, "rel")


def test_duplicate_pair_in_json(write, located) -> None:
    path = write("r.json", '{"q1": {"d1": 1.0,\n "d2": 2.0,\n "d1": 3.0}}')
    with pytest.raises(InputError, match="duplicate") as err:
        read_json_run(path)
    located(err.value, path, 3, "docid")


@pytest.mark.parametrize(("how", "kept"), [("first", 1.0), ("max", 3.0)])
def test_dedupe_json(how, kept, write) -> None:
    run = read_json_run(write("r.json", '{"q1": {"d1": 1.0, "d2": 2.0, "d1": 3.0}}'), dedupe=how)
    assert run.to_dict() == {"q1": {"d1": kept, "d2": 2.0}}
    assert (run.dedupe, run.n_dropped_duplicates) == (how, 1)


def test_duplicate_pair_in_json_qrels(write, located) -> None:
    path = write("q.json", '{"q1": {"d1": 1},\n "q1": {"d1": 0}}')
    with pytest.raises(InputError, match="duplicate") as err:
        read_json_qrels(path)
    located(err.value, path, 2, "docid")
    assert read_json_qrels(path, dedupe="max").to_dict() == {"q1": {"d1": 1}}


@pytest.mark.parametrize("text", ['[{"q1": {"d1": 1}}]', '"run"', "3"])
def test_json_top_level_must_be_an_object(text, write, located) -> None:
    path = write("r.json", text)
    with pytest.raises(InputError, match="expected a JSON object") as err:
        read_json_run(path)
    located(err.value, path, 1, None)


def test_json_values_must_be_objects(write, located) -> None:
    path = write("r.json", '{"q1": {"d1": 1},\n "q2": [["d1", 1]]}')
    with pytest.raises(InputError, match="value of qid 'q2' must be an object") as err:
        read_json_run(path)
    located(err.value, path, 2, None)


def test_empty_json_ids(write, located) -> None:
    path = write("r.json", '{"q1": {"d1": 1},\n "q2": {"": 1}}')
    with pytest.raises(InputError, match="empty docid") as err:
        read_json_run(path)
    located(err.value, path, 2, "docid")


@pytest.mark.parametrize(("text", "match"), [("", "empty"), (" \n", "empty"),
                                           ("{}", "no rows"), ('{"q1": {}}', "no rows")])
def test_empty_json(text, match, write, located) -> None:
    path = write("r.json", text)
    with pytest.raises(InputError, match=match) as err:
        read_json_run(path)
    located(err.value, path, None, None)


# -- validation rules: JSON Lines ---------------------------------------------------


def test_invalid_json_line(write, located) -> None:
    path = write("r.jsonl", jsonl({"qid": "q", "docid": "a", "score": 1}) + '{"qid": "q",\n')
    with pytest.raises(InputError, match="invalid JSON") as err:
        read_jsonl_run(path)
    located(err.value, path, 2, None)


def test_invalid_utf8_jsonl(write, located) -> None:
    good = jsonl({"qid": "q", "docid": "a", "score": 1}).encode()
    path = write("r.jsonl", good + good.replace(b'"a"', b'"\xe2\x28"'))
    with pytest.raises(InputError, match="invalid UTF-8") as err:
        read_jsonl_run(path)
    located(err.value, path, 2, None)


@pytest.mark.parametrize(("score", "match"), [
    ("\"2\"", "must be a number"), ("false", "must be a number"), ("NaN", "finite"),
    ("Infinity", "finite"), ("1e999", "finite"),
])
def test_bad_score_in_jsonl(score, match, write, located) -> None:
    path = write("r.jsonl", jsonl({"qid": "q", "docid": "a", "score": 1})
                 + '{"qid": "q", "docid": "b", "score": ' + score + "}\n")
    with pytest.raises(InputError, match=match) as err:
        read_jsonl_run(path)
    located(err.value, path, 2, "score")


@pytest.mark.parametrize("rel", ["1.5", '"1"', "true", "null"])
def test_non_integer_relevance_in_jsonl(rel, write, located) -> None:
    path = write("q.jsonl", '\n{"qid": "q", "docid": "b", "rel": ' + rel + "}\n")
    with pytest.raises(InputError, match="relevance must be an integer") as err:
        read_jsonl_qrels(path)
    located(err.value, path, 2, "rel")


def test_duplicate_pair_in_jsonl(write, located) -> None:
    rows = [{"qid": "q", "docid": "a", "score": 1}, {"qid": "q", "docid": "b", "score": 5},
            {"qid": "q", "docid": "a", "score": 9}]
    path = write("r.jsonl", jsonl(*rows))
    with pytest.raises(InputError, match="duplicate") as err:
        read_jsonl_run(path)
    located(err.value, path, 3, "docid")
    assert read_jsonl_run(path, dedupe="max").to_dict() == {"q": {"a": 9.0, "b": 5.0}}
    first = read_jsonl_run(path, dedupe="first")
    assert first.to_dict() == {"q": {"a": 1.0, "b": 5.0}}
    assert first.n_dropped_duplicates == 1


def test_duplicate_pair_in_jsonl_qrels(write, located) -> None:
    path = write("q.jsonl", jsonl({"qid": "q", "docid": "a", "rel": 1},
                                  {"qid": "q", "docid": "a", "rel": 0}))
    with pytest.raises(InputError, match="duplicate") as err:
        read_jsonl_qrels(path)
    located(err.value, path, 2, "docid")


def test_missing_key(write, located) -> None:
    path = write("r.jsonl", jsonl({"qid": "q", "score": 1}))
    with pytest.raises(InputError, match="missing key 'docid' or 'doc_id'") as err:
        read_jsonl_run(path)
    located(err.value, path, 1, "docid")


def test_both_spellings_of_a_key(write, located) -> None:
    path = write("r.jsonl", jsonl({"qid": "q", "query_id": "q", "docid": "a", "score": 1}))
    with pytest.raises(InputError, match="name the same field") as err:
        read_jsonl_run(path)
    located(err.value, path, 1, "qid")


def test_unknown_keys_rejected_then_ignored(write, located) -> None:
    path = write("r.jsonl", jsonl({"qid": "q", "docid": "a", "score": 1, "text": "hello"}))
    with pytest.raises(InputError, match="unexpected keys") as err:
        read_jsonl_run(path)
    located(err.value, path, 1, "text")
    assert read_jsonl_run(path, extra_columns="ignore").to_dict() == {"q": {"a": 1.0}}


@pytest.mark.parametrize("line", ['["q", "a", 1]', '"q a 1"', "1"])
def test_jsonl_line_must_be_an_object(line, write, located) -> None:
    path = write("r.jsonl", jsonl({"qid": "q", "docid": "a", "score": 1}) + line + "\n")
    with pytest.raises(InputError, match="one JSON object per line") as err:
        read_jsonl_run(path)
    located(err.value, path, 2, None)


@pytest.mark.parametrize(("value", "field"), [({"qid": 1.5}, "qid"), ({"docid": None}, "docid"),
                                              ({"qid": True}, "qid"), ({"docid": ""}, "docid")])
def test_bad_ids_in_jsonl(value, field, write, located) -> None:
    row = {"qid": "q", "docid": "a", "score": 1} | value
    path = write("r.jsonl", jsonl({"qid": "q", "docid": "z", "score": 1}, row))
    with pytest.raises(InputError) as err:
        read_jsonl_run(path)
    located(err.value, path, 2, field)


def test_rank_on_some_lines_only(write, located) -> None:
    path = write("r.jsonl", jsonl({"qid": "q", "docid": "a", "score": 1, "rank": 1},
                                  {"qid": "q", "docid": "b", "score": 0}))
    with pytest.raises(InputError, match="every line or none") as err:
        read_jsonl_run(path)
    located(err.value, path, 2, "rank")


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_empty_jsonl(text, write, located) -> None:
    path = write("r.jsonl", text)
    with pytest.raises(InputError, match="empty") as err:
        read_jsonl_run(path)
    located(err.value, path, None, None)


# -- dict round trip and fast/careful agreement ---------------------------------------


def test_dict_round_trip() -> None:
    assert Run.from_dict(Run.from_dict(SCORES).to_dict()).to_dict() == SCORES
    assert Qrels.from_dict(Qrels.from_dict(LABELS).to_dict()).to_dict() == LABELS


VALUES = st.one_of(
    st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
    st.none(), st.sampled_from(["1", "", "x"]), st.just([1]), st.just(10**400),
)
IDS = st.sampled_from(["q1", "q2", "", "é", "a\u2028b", "d1", "d2"])


@st.composite
def documents(draw: st.DrawFn) -> list[tuple[str, list[tuple[str, object]]]]:
    """Pairs lists (duplicate keys allowed) that mostly hold valid numbers."""
    odd = draw(st.booleans())
    good = st.one_of(st.integers(-3, 3), st.floats(-1e6, 1e6))
    out = []
    for _ in range(draw(st.integers(0, 3))):
        docs = draw(st.lists(st.tuples(IDS, VALUES if odd else good), max_size=4))
        out.append((draw(IDS), docs))
    return out


def render(doc: list[tuple[str, list[tuple[str, object]]]]) -> str:
    def obj(pairs: list[tuple[str, object]], inner: bool) -> str:
        body = ",\n ".join(json.dumps(k) + ": " + (obj(v, False) if inner else json.dumps(v))
                           for k, v in pairs)  # type: ignore[arg-type]
        return "{" + body + "}"

    return obj(doc, True)  # type: ignore[arg-type]


def outcome(read: Any) -> tuple[Any, ...]:
    try:
        value = read()
    except InputError as exc:
        return ("error", str(exc))
    return ("ok", value.to_dict())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), dedupe=st.sampled_from([None, "first", "max"]))
def test_json_fast_and_careful_agree(doc, dedupe, tmp_path_factory) -> None:
    path = tmp_path_factory.mktemp("j") / "r.json"
    path.write_text(render(doc))
    for reader, fast in ((read_json_run, "_fast_columns"), (read_json_qrels, "_fast_columns")):
        normal = outcome(lambda: reader(path, dedupe=dedupe))  # noqa: B023
        with pytest.MonkeyPatch.context() as m:
            m.setattr(_jsondoc, fast, lambda *a, **k: None)
            careful = outcome(lambda: reader(path, dedupe=dedupe))  # noqa: B023
        assert normal == careful


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), spelling=st.sampled_from([("qid", "docid"), ("query_id", "doc_id")]))
def test_jsonl_fast_and_careful_agree(doc, spelling, tmp_path_factory) -> None:
    folder = tmp_path_factory.mktemp("l")
    qk, dk = spelling
    rows = [(q, d, v) for q, docs in doc for d, v in docs]
    (folder / "r.jsonl").write_text("".join(
        json.dumps({qk: q, dk: d, "score": v}) + "\n" for q, d, v in rows))
    (folder / "q.jsonl").write_text("".join(
        json.dumps({qk: q, dk: d, "relevance": v}) + "\n" for q, d, v in rows))
    for reader, name in ((read_jsonl_run, "r.jsonl"), (read_jsonl_qrels, "q.jsonl")):
        path = folder / name
        normal = outcome(lambda: reader(path))  # noqa: B023
        with pytest.MonkeyPatch.context() as m:
            m.setattr(_jsonio, "_jsonl_fast", lambda *a, **k: None)
            careful = outcome(lambda: reader(path))  # noqa: B023
        assert normal == careful
