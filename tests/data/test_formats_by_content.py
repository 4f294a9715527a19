"""A run or qrels file is recognised by its content, not its name (issue 22, item 8).

Every file here has a misleading name; `load_run`/`load_qrels` read it as
what it holds. A file whose content fits no format is refused naming the
file, the line and every format tried; ``format=`` (the CLI's
``--run-format``/``--qrels-format``) overrides the content.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.data import (
    Run,
    load_qrels,
    load_run,
    sniff_format,
    write_json_run,
    write_jsonl_run,
    write_parquet_run,
)

SCORES = {"q1": {"d1": 3.5, "d2": 0.25}, "q2": {"d1": -1.0}}
MSMARCO = "q1\td1\t1\nq1\td2\t2\nq2\td1\t1\n"
TREC_RUN = "q1 Q0 d1 1 3.5 t\nq1 Q0 d2 2 0.25 t\nq2 Q0 d1 1 -1.0 t\n"
TREC_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"
LABELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def test_a_three_column_msmarco_run_named_x_run_is_msmarco(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.run", MSMARCO)
    assert sniff_format(path) == "msmarco"
    run = load_run(path)
    assert run.ranks is not None and run.to_dict() == {"q1": {"d1": -1.0, "d2": -2.0},
                                                      "q2": {"d1": -1.0}}


def test_a_gzipped_msmarco_run_is_msmarco_too(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.trec.gz", gzip.compress(MSMARCO.encode()))
    assert sniff_format(path) == "msmarco" and load_run(path).ranks is not None


@pytest.mark.parametrize("name", ["run.jsonl", "run.json", "run.tsv", "run"])
def test_a_trec_run_under_any_name_is_trec(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name, TREC_RUN)
    assert sniff_format(path, kind="run") == "trec"
    assert load_run(path).to_dict() == SCORES


@pytest.mark.parametrize("name", ["qrels.json", "qrels.jsonl", "qrels.tsv", "dev.run"])
def test_trec_qrels_under_any_name_are_trec(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name, TREC_QRELS)
    assert sniff_format(path, kind="qrels") == "trec"
    assert load_qrels(path).to_dict() == LABELS


def test_msmarco_qrels_are_trec_qrels_whatever_the_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "qrels.dev.tsv", "1185869\t0\t0\t1\n1185868\t0\t16\t1\n")
    assert load_qrels(path).to_dict() == {"1185869": {"0": 1}, "1185868": {"16": 1}}


def test_json_and_jsonl_runs_named_as_trec_are_read_as_json(tmp_path: Path) -> None:
    run = Run.from_dict(SCORES)
    doc, lines = tmp_path / "a.json", tmp_path / "b.jsonl"
    write_json_run(run, doc)
    write_jsonl_run(run, lines)
    as_trec, as_txt = tmp_path / "a.trec", tmp_path / "b.txt"
    doc.rename(as_trec)
    lines.rename(as_txt)
    assert sniff_format(as_trec) == "json" and sniff_format(as_txt) == "jsonl"
    assert load_run(as_trec).to_dict() == SCORES == load_run(as_txt).to_dict()


def test_a_parquet_run_is_recognised_by_its_magic_bytes(tmp_path: Path) -> None:
    written = tmp_path / "r.parquet"
    write_parquet_run(Run.from_dict(SCORES), written)
    disguised = tmp_path / "run.txt"
    written.rename(disguised)
    assert sniff_format(disguised) == "parquet"
    assert load_run(disguised).to_dict() == SCORES
    with pytest.raises(InputError, match="a Parquet file is read as a run, not as qrels") as err:
        load_qrels(disguised)
    assert err.value.path == str(disguised)


def test_beir_qrels_named_txt_are_beir(tmp_path: Path) -> None:
    path = _write(tmp_path, "qrels.txt", "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    assert sniff_format(path) == "beir" and load_qrels(path).to_dict() == {"q1": {"d1": 1}}


@pytest.mark.parametrize(("content", "kind"), [
    ("q1 d1\n", "run"),
    ("just-one-word\n", "qrels"),
    ("q1\td1\t0.75\n", "run"),  # a score where MS MARCO has a rank
    ("a b c d e\n", "run"),
])
def test_an_unknown_shape_is_refused_naming_the_file_and_the_formats_tried(
        tmp_path: Path, content: str, kind: str) -> None:
    path = _write(tmp_path, "data.run", "# a comment\n\n" + content)
    load = load_run if kind == "run" else load_qrels
    with pytest.raises(InputError, match=f"cannot tell which {kind} format") as err:
        load(path)
    message = str(err.value)
    assert err.value.path == str(path) and err.value.line == 3
    assert message.startswith(f"{path}, line 3")
    for tried in ("JSON document", "JSONL", "BEIR TSV", "TREC"):
        assert tried in message, tried
    assert f"--{kind}-format FORMAT" in message


def test_the_other_kind_of_file_is_refused_with_a_hint(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "bm25.run", TREC_QRELS)
    with pytest.raises(InputError, match="four columns are TREC qrels: is this the qrels file"):
        load_run(qrels)
    run = _write(tmp_path, "qrels.txt", TREC_RUN)
    with pytest.raises(InputError, match="six columns are a TREC run: is this the run"):
        load_qrels(run)
    ms = _write(tmp_path, "qrels.tsv", MSMARCO)
    with pytest.raises(InputError, match="qid docid rank is an MS MARCO run: is this the run"):
        load_qrels(ms)


def test_the_format_argument_overrides_the_content(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.run", MSMARCO)
    with pytest.raises(InputError, match="expected 6 columns"):
        load_run(path, format="trec")
    four = _write(tmp_path, "odd.run", "q1 d1 7 x\n")
    with pytest.raises(InputError, match="cannot tell which run format"):
        load_run(four)
    assert load_run(four, format="msmarco", extra_columns="ignore").to_dict() == {
        "q1": {"d1": -7.0}}


def test_an_empty_file_goes_by_its_name_so_its_reader_words_it(tmp_path: Path) -> None:
    assert sniff_format(_write(tmp_path, "a.jsonl", "")) == "jsonl"
    assert sniff_format(_write(tmp_path, "b.run", "# only a comment\n")) == "trec"
    with pytest.raises(InputError, match="empty"):
        load_run(tmp_path / "a.jsonl")


# -- the command line: content first, --run-format / --qrels-format override ----------------


def _cli(*args: str) -> object:
    from typer.testing import CliRunner

    from rankproof.cli import app

    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_measure_reads_a_disguised_msmarco_run_and_the_options_override(tmp_path: Path) -> None:
    run = _write(tmp_path, "x.run", MSMARCO)
    qrels = _write(tmp_path, "qrels.json", TREC_QRELS)
    r = _cli("measure", str(qrels), str(run), "-m", "P@1", "-f", "json")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    assert '"P@1"' in r.stdout  # type: ignore[attr-defined]
    forced = _cli("measure", str(qrels), str(run), "-m", "P@1", "--run-format", "trec")
    assert forced.exit_code == 2  # type: ignore[attr-defined]
    assert "expected 6 columns" in forced.stderr  # type: ignore[attr-defined]
    wrong = _cli("measure", str(qrels), str(run), "-m", "P@1", "--qrels-format", "json")
    assert wrong.exit_code == 2, wrong.output  # type: ignore[attr-defined]
    bogus = _cli("measure", str(qrels), str(run), "--run-format", "csv")
    assert bogus.exit_code == 2 and "'csv' is not one of" in bogus.output  # type: ignore[attr-defined]


def test_compare_refuses_an_unknown_run_naming_it(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.txt", TREC_QRELS)
    good = _write(tmp_path, "a.run", TREC_RUN)
    odd = _write(tmp_path, "b.run", "q1 d1\n")
    r = _cli("compare", str(qrels), str(good), str(odd), "-m", "P@1")
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    err = r.stderr  # type: ignore[attr-defined]
    assert f"{odd}, line 1" in err and "cannot tell which run format" in err
    assert "--run-format FORMAT" in err
