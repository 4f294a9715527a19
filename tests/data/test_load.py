"""`load_run` / `load_qrels`: one entry point, format from the argument or the content."""

from __future__ import annotations

import gzip
from typing import get_args

import pytest

from rankproof import InputError
from rankproof.data import (
    QRELS_FORMATS,
    RUN_FORMATS,
    Format,
    Qrels,
    Run,
    _load,
    load_qrels,
    load_run,
    sniff_format,
    write_beir_qrels,
    write_beir_run,
    write_json_qrels,
    write_json_run,
    write_jsonl_qrels,
    write_jsonl_run,
    write_trec_qrels,
    write_trec_run,
)

SCORES = {"q1": {"d1": 3.5, "d2": 0.25}, "q2": {"d1": -1.0}}
LABELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}

RUN_WRITERS = {"trec": write_trec_run, "beir": write_beir_run, "json": write_json_run,
               "jsonl": write_jsonl_run}
QRELS_WRITERS = {"trec": write_trec_qrels, "beir": write_beir_qrels, "json": write_json_qrels,
                 "jsonl": write_jsonl_qrels}
SUFFIX = {"trec": ".txt", "beir": ".tsv", "json": ".json", "jsonl": ".jsonl"}
FORMATS = QRELS_FORMATS  # the formats that hold both runs and qrels


def test_formats() -> None:
    assert FORMATS == ("trec", "beir", "json", "jsonl") == _load.QRELS_FORMATS
    assert RUN_FORMATS == (*FORMATS, "msmarco", "parquet") == get_args(Format) \
        == _load.RUN_FORMATS


@pytest.mark.parametrize("gz", ["", ".gz"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_round_trips_through_the_loader(fmt, gz, tmp_path) -> None:
    run = Run.from_dict(SCORES)
    qrels = Qrels.from_dict(LABELS)
    run_path = tmp_path / f"bm25{SUFFIX[fmt]}{gz}"
    qrels_path = tmp_path / f"qrels{SUFFIX[fmt]}{gz}"
    RUN_WRITERS[fmt](run, run_path)
    QRELS_WRITERS[fmt](qrels, qrels_path)
    assert sniff_format(run_path) == fmt
    assert sniff_format(qrels_path) == fmt
    loaded = load_run(run_path)
    assert loaded.to_dict() == SCORES
    assert loaded.name == "bm25"
    assert load_qrels(qrels_path).digest == qrels.digest


@pytest.mark.parametrize(("name", "content", "fmt"), [
    ("a.json", "{}", "json"),
    ("a.JSON", "{}", "json"),
    ("a.jsonl", "", "jsonl"),
    ("a.ndjson", "", "jsonl"),
    ("a.json.gz", "{}", "json"),
    ("a.tsv", "query-id\tcorpus-id\tscore\n", "beir"),
    ("a.tsv", "q1\t0\td1\t1\n", "trec"),
    ("a.txt", "query-id\tcorpus-id\tscore\n", "beir"),  # the content decides (issue 22)
    ("qrels", "q1 0 d1 1\n", "trec"),
    ("run.trec", "", "trec"),
])
def test_sniff_format(name, content, fmt, write) -> None:
    assert sniff_format(write(name, content)) == fmt


def test_gzip_beir_header_is_sniffed(write) -> None:
    path = write("test.tsv.gz", gzip.compress(b"query-id\tcorpus-id\tscore\nq\td\t1\n"))
    assert sniff_format(path) == "beir"
    assert load_qrels(path).to_dict() == {"q": {"d": 1}}


def test_format_argument_wins_over_the_name(write) -> None:
    path = write("run.txt", '{"q1": {"d1": 1.0}}')
    assert load_run(path, format="json").to_dict() == {"q1": {"d1": 1.0}}
    assert load_run(path).to_dict() == {"q1": {"d1": 1.0}}  # by content, not by the name
    with pytest.raises(InputError, match="expected 6 columns"):
        load_run(path, format="trec")  # the argument wins over the content


def test_unknown_format(write) -> None:
    with pytest.raises(InputError, match="unknown format 'csv'") as err:
        load_run(write("r.txt", "q Q0 d 1 1 t\n"), format="csv")  # type: ignore[arg-type]
    assert err.value.field == "format"


def test_missing_file_and_directory(tmp_path) -> None:
    with pytest.raises(InputError, match="no such file") as err:
        load_run(tmp_path / "nope.txt")
    assert err.value.path == str(tmp_path / "nope.txt")
    with pytest.raises(InputError, match="is a directory"):
        load_qrels(tmp_path)


def test_options_reach_the_reader(write) -> None:
    path = write("r.txt", "q Q0 d 1 1.0 t x\nq Q0 d 2 2.0 t x\n")
    run = load_run(path, name="mine", dedupe="max", extra_columns="ignore")
    assert (run.name, run.dedupe, run.n_dropped_duplicates) == ("mine", "max", 1)
    assert run.to_dict() == {"q": {"d": 2.0}}
    jsonl = write("r.jsonl", '{"qid": "q", "docid": "d", "score": 1, "x": 0}\n')
    assert load_run(jsonl, extra_columns="ignore").to_dict() == {"q": {"d": 1.0}}
    qrels = write("q.json", '{"q": {"d": 1, "d": 0}}')
    assert load_qrels(qrels, dedupe="first").to_dict() == {"q": {"d": 1}}


def test_errors_come_through_with_their_location(write, located) -> None:
    path = write("q.jsonl", '{"qid": "q", "docid": "d", "rel": 1}\n{"qid": "q"}\n')
    with pytest.raises(InputError) as err:
        load_qrels(path)
    located(err.value, path, 2, "docid")


def test_real_qrels_in_every_layout(shared_data, tmp_path) -> None:
    qrels = load_qrels(shared_data / "trec_dl" / "qrels.dl19-passage.txt")
    assert len(qrels.topics) == 43
    for fmt, writer in QRELS_WRITERS.items():
        path = tmp_path / f"dl19{SUFFIX[fmt]}.gz"
        writer(qrels, path)
        assert load_qrels(path).digest == qrels.digest, fmt


def test_real_run_in_every_layout(shared_data, tmp_path) -> None:
    run = load_run(shared_data / "rankllm_runs" / "BM25" / "trec_results_dl19.txt")
    assert (len(run), len(run.topics), run.name) == (4300, 43, "trec_results_dl19")
    for fmt, writer in RUN_WRITERS.items():
        path = tmp_path / f"bm25{SUFFIX[fmt]}"
        writer(run, path)
        back = load_run(path)
        assert back.to_dict() == run.to_dict(), fmt
