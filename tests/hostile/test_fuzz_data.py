"""Fuzz: run and qrels readers (TREC, BEIR TSV, JSON, JSON Lines, MS MARCO, gzip, sniffing).

Property (see ``_fuzz``): mutated real files and generated lines give a `Run`
/`Qrels` or a `rankproof.RankproofError`, never another exception, and
reading never writes anything next to the input.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from tests.hostile._fuzz import (
    NASTY,
    REPO,
    assert_no_controls,
    dumps,
    file_bytes,
    fuzz_settings,
    json_text,
    jsonl_text,
    maybe_gzipped,
    refused_or_read,
    seed_lines,
    shared,
    snapshot,
)
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.data import (
    Input,
    load_qrels,
    load_run,
    read_beir_qrels,
    read_beir_run,
    read_json_qrels,
    read_json_run,
    read_jsonl_qrels,
    read_jsonl_run,
    read_msmarco_run,
    read_trec_qrels,
    read_trec_run,
)

TOY = REPO / "examples" / "toy"
PYSERINI = "pyserini_test_fixtures"


def _rows(data: bytes) -> list[list[str]]:
    return [line.split() for line in data.decode().splitlines() if line.strip()
            and not line.startswith("#")]


TREC_RUNS = [
    seed_lines(shared("trec_eval_tests", "results.test")),
    seed_lines(shared("trec_eval_tests", "results.comment.test")),
    seed_lines(shared(PYSERINI, "simple_trec_run_fusion_1.txt")),
    seed_lines(shared(PYSERINI, "simple_trec_run_msmarco_doc1.txt")),
    seed_lines(shared("rankllm_runs", "BM25", "trec_results_dl19.txt")),
    seed_lines(TOY / "bm25.run", 10),
]
TREC_QRELS = [
    seed_lines(shared("trec_eval_tests", "qrels.test")),
    seed_lines(shared("trec_eval_tests", "qrels.rel_level")),
    seed_lines(shared("trec_eval_tests", "qrels.comment.test")),
    seed_lines(shared("anserini_dummy", "qrels.dummy.txt")),
    seed_lines(shared("beir_anserini", "qrels.beir-v1.0.0-scifact.test.txt")),
    seed_lines(shared("msmarco_passage_dev_small", "qrels.msmarco-passage.dev-subset.txt")),
    seed_lines(shared("vaswani", "qrels")),
    seed_lines(shared("cranfield", "cranqrel")),  # three columns: a malformed TREC qrels file
    seed_lines(TOY / "qrels.txt", 10),
]
_RUN_ROWS = _rows(TREC_RUNS[0]) + _rows(TREC_RUNS[-1])
_QRELS_ROWS = _rows(TREC_QRELS[0]) + _rows(TREC_QRELS[-1])
BEIR_HEADER = b"query-id\tcorpus-id\tscore\n"
BEIR_QRELS = [BEIR_HEADER + b"".join(f"{q}\t{d}\t{r}\n".encode() for q, _, d, r in _QRELS_ROWS)]
BEIR_RUNS = [BEIR_HEADER + b"".join(f"{q}\t{d}\t{s}\n".encode()
                                    for q, _, d, _, s, _ in _RUN_ROWS)]
MSMARCO_RUNS = [b"".join(f"{q}\t{d}\t{k}\n".encode() for q, _, d, k, _, _ in _RUN_ROWS)]


def _as_dict(rows: list[list[str]], value: Callable[[list[str]], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for row in rows:
        out.setdefault(row[0], {})[row[2]] = value(row)
    return out


JSON_RUN = _as_dict(_RUN_ROWS, lambda r: float(r[4]))
JSON_QRELS = _as_dict(_QRELS_ROWS, lambda r: int(r[3]))
JSONL_RUN_ROWS = [{"qid": q, "docid": d, "score": float(s), "rank": int(k)}
                  for q, _, d, k, s, _ in _RUN_ROWS]
JSONL_QRELS_ROWS = [{"qid": q, "docid": d, "rel": int(r)} for q, _, d, r in _QRELS_ROWS]

# Generated lines: columns drawn from real-looking and hostile tokens.
TOKENS = st.sampled_from([b"q1", b"q2", b"Q0", b"0", b"d1", b"d2", b"1", b"2", b"-1", b"1.5",
                          b"run", b"#", *NASTY[:60]])
GENERATED_LINES = st.lists(
    st.lists(TOKENS, min_size=0, max_size=7).map(
        lambda cols: b" ".join(cols)), min_size=0, max_size=8,
).map(lambda lines: b"\n".join(lines)).flatmap(maybe_gzipped)


def _check(reader: Callable[..., Any], data: bytes, name: str, **kwargs: Any) -> None:
    """Write ``data`` as ``name`` in a fresh folder, read it; only typed refusals, no writes."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / name
        path.write_bytes(data)
        before = snapshot(folder)
        refused_or_read(reader, path, **kwargs)
        assert snapshot(folder) == before, "a reader wrote next to its input"


# -- one test per reader, over its own format's mutated seeds -------------------------

READERS: list[tuple[str, Callable[..., Any], list[bytes], str]] = [
    ("trec_run", read_trec_run, TREC_RUNS, "input.run"),
    ("trec_qrels", read_trec_qrels, TREC_QRELS, "qrels.txt"),
    ("beir_qrels", read_beir_qrels, BEIR_QRELS, "test.tsv"),
    ("beir_run", read_beir_run, BEIR_RUNS, "run.tsv"),
    ("msmarco_run", read_msmarco_run, MSMARCO_RUNS, "run.tsv"),
]


@pytest.mark.parametrize(("reader", "seeds", "name"), [r[1:] for r in READERS],
                         ids=[r[0] for r in READERS])
@given(data=st.data())
@fuzz_settings(400)
def test_text_readers_refuse_mutated_files_with_typed_errors(
        reader: Callable[..., Any], seeds: list[bytes], name: str, data: st.DataObject) -> None:
    content = data.draw(file_bytes(seeds), label="file")
    extra = data.draw(st.sampled_from(["error", "ignore"]), label="extra_columns")
    if reader is read_trec_qrels or reader is read_beir_qrels:
        _check(reader, content, name)
    else:
        _check(reader, content, name, extra_columns=extra)


@pytest.mark.parametrize("reader", [read_trec_run, read_trec_qrels, read_msmarco_run,
                                    read_beir_qrels], ids=lambda f: f.__name__)
@given(content=GENERATED_LINES)
@fuzz_settings(300)
def test_text_readers_refuse_generated_lines_with_typed_errors(
        reader: Callable[..., Any], content: bytes) -> None:
    _check(reader, content, "generated.txt")


JSON_READERS: list[tuple[str, Callable[..., Any], st.SearchStrategy[bytes], str]] = [
    ("json_run", read_json_run, json_text(JSON_RUN), "run.json"),
    ("json_qrels", read_json_qrels, json_text(JSON_QRELS), "qrels.json"),
    ("jsonl_run", read_jsonl_run, jsonl_text(JSONL_RUN_ROWS), "run.jsonl"),
    ("jsonl_qrels", read_jsonl_qrels, jsonl_text(JSONL_QRELS_ROWS), "qrels.jsonl"),
]


@pytest.mark.parametrize(("reader", "strategy", "name"), [r[1:] for r in JSON_READERS],
                         ids=[r[0] for r in JSON_READERS])
@given(data=st.data())
@fuzz_settings(400)
def test_json_readers_refuse_mutated_documents_with_typed_errors(
        reader: Callable[..., Any], strategy: st.SearchStrategy[bytes], name: str,
        data: st.DataObject) -> None:
    content = data.draw(strategy.flatmap(maybe_gzipped), label="file")
    _check(reader, content, name)


# -- the format-sniffing entry points: any file under any name ----------------------------

ALL_SEEDS = [*TREC_RUNS, *TREC_QRELS, *BEIR_QRELS, *BEIR_RUNS, *MSMARCO_RUNS,
             dumps(JSON_RUN), dumps(JSON_QRELS),
             b"\n".join(dumps(r) for r in JSONL_RUN_ROWS[:6])]
NAMES = ["x.run", "x.txt", "x.tsv", "x.json", "x.jsonl", "x.ndjson", "x.txt.gz", "x.tsv.gz",
         "x", "run[bm25].run"]


@pytest.mark.parametrize("loader", [load_run, load_qrels], ids=lambda f: f.__name__)
@given(content=file_bytes(ALL_SEEDS), name=st.sampled_from(NAMES))
@fuzz_settings(500)
def test_loaders_sniff_any_file_under_any_name_with_typed_errors(
        loader: Callable[..., Any], content: bytes, name: str) -> None:
    _check(loader, content, name)


@pytest.mark.parametrize("loader", [load_run, load_qrels], ids=lambda f: f.__name__)
@given(content=file_bytes(ALL_SEEDS))
@fuzz_settings(300)
def test_loaders_sniff_unnamed_input_by_content_with_typed_errors(
        loader: Callable[..., Any], content: bytes) -> None:
    """Standard input has no name: the format comes from the content alone."""
    refused_or_read(lambda: loader(Input.from_bytes(content, "<stdin>")))


# -- through the CLI: a damaged input is exit 2 and leaves -o untouched --------------

def _formats(rows: list[list[str]], run: bool) -> list[bytes]:
    """The toy run or qrels ``rows`` in every format `load_run`/`load_qrels` reads."""
    if run:
        as_dict = _as_dict(rows, lambda r: float(r[4]))
        lines = [{"qid": q, "docid": d, "score": float(sc)} for q, _, d, _, sc, _ in rows]
        tsv = [f"{q}\t{d}\t{sc}" for q, _, d, _, sc, _ in rows]
    else:
        as_dict = _as_dict(rows, lambda r: int(r[3]))
        lines = [{"qid": q, "docid": d, "rel": int(r)} for q, _, d, r in rows]
        tsv = [f"{q}\t{d}\t{r}" for q, _, d, r in rows]
    out = [b"".join(" ".join(r).encode() + b"\n" for r in rows), dumps(as_dict),
           b"\n".join(dumps(x) for x in lines), BEIR_HEADER + "\n".join(tsv).encode()]
    if run:
        out.append(b"".join(f"{q}\t{d}\t{k}\n".encode() for q, _, d, k, _, _ in rows))
    return out


TOY_RUNS = _formats(_rows(seed_lines(TOY / "bm25.run", 30)), run=True)
TOY_QRELS = _formats(_rows(seed_lines(TOY / "qrels.txt", 30)), run=False)


@given(which=st.sampled_from(["qrels", "run"]), name=st.sampled_from([*NAMES, "-"]),
       data=st.data())
@fuzz_settings(200)
def test_measure_cli_on_mutated_inputs_exits_0_or_2_and_writes_all_or_nothing(
        which: str, name: str, data: st.DataObject) -> None:
    """A mutated qrels or run file (or the same bytes on standard input, ``-``)."""
    seeds = TOY_QRELS if which == "qrels" else TOY_RUNS
    content = data.draw(file_bytes(seeds, 3), label="content")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        qrels, run = root / "qrels.txt", root / "bm25.run"
        qrels.write_bytes(TREC_QRELS[-1])
        run.write_bytes(TREC_RUNS[-1])
        if name == "-":
            target = "-"
        else:
            target = str(root / name)
            (qrels if which == "qrels" else run).unlink()
            Path(target).write_bytes(content)
        args = [target, str(run)] if which == "qrels" else [str(qrels), target]
        out = root / "out" / "table.txt"
        out.parent.mkdir()
        result = CliRunner().invoke(app, ["measure", *args, "-m", "nDCG@10", "-m", "AP",
                                          "-o", str(out)],
                                    input=content if name == "-" else None)
        event(f"exit {result.exit_code}")
        assert result.exit_code in (0, 2), (result.exit_code, result.output[-2000:])
        assert_no_controls(result.output)
        written = sorted(p.name for p in out.parent.iterdir())
        assert written == (["table.txt"] if result.exit_code == 0 else []), \
            (result.exit_code, written, result.output[-500:])
