"""The one text reader (`Input`): ``-`` for standard input, gzip by content, one BOM
rule, located UTF-8 errors, and `OSError`s turned into `InputError`s naming the path."""

from __future__ import annotations

import gzip
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rankproof import InputError
from rankproof.data import (
    STDIN,
    Input,
    load_qrels,
    load_run,
    read_beir_qrels,
    read_json_run,
    read_jsonl,
    read_jsonl_run,
    read_trec_qrels,
    read_trec_run,
    sniff_format,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "rankproof"
TREC_RUN = b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 d1 1 0.5 bm25\n"
EXPECTED = {"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d1": 0.5}}


def feed_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    """Standard input holding ``data`` (real bytes behind a text wrapper, like a pipe)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


# -- standard input -------------------------------------------------------------------


@pytest.mark.parametrize(("content", "fmt"), [
    (TREC_RUN, "trec"),
    (b'{"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d1": 0.5}}\n', "json"),
    (b'{\n  "q1": {"d1": 2.5, "d2": 1.5},\n  "q2": {"d1": 0.5}\n}\n', "json"),
    (b'{"qid": "q1", "docid": "d1", "score": 2.5}\n{"qid": "q1", "docid": "d2", "score": 1.5}\n'
     b'{"qid": "q2", "docid": "d1", "score": 0.5}\n', "jsonl"),
    (b"query-id\tcorpus-id\tscore\nq1\td1\t2.5\nq1\td2\t1.5\nq2\td1\t0.5\n", "beir"),
])
def test_stdin_format_is_sniffed_from_content(content, fmt, monkeypatch) -> None:
    feed_stdin(monkeypatch, content)
    src = Input.open(STDIN)
    assert (src.label, src.path, src.is_stdin) == ("<stdin>", None, True)
    assert sniff_format(src) == fmt
    run = load_run(src)
    assert run.to_dict() == EXPECTED
    assert (run.name, run.source) == ("stdin", "<stdin>")


def test_stdin_is_read_once_even_gzipped(monkeypatch) -> None:
    stream = io.BytesIO(gzip.compress(TREC_RUN))
    reads: list[int] = []
    real_read = stream.read

    def counting_read(*args: int) -> bytes:
        reads.append(1)
        return real_read(*args)

    monkeypatch.setattr(stream, "read", counting_read)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stream))
    run = load_run("-")  # sniffs, then parses: one read of the pipe
    assert run.to_dict() == EXPECTED
    assert len(reads) == 1


def test_stdin_qrels_and_errors_name_stdin(monkeypatch, located) -> None:
    feed_stdin(monkeypatch, b"q1 0 d1 1\nq1 0 d2 x\n")
    with pytest.raises(InputError, match="relevance must be an integer") as err:
        load_qrels("-")
    assert err.value.path == "<stdin>" and err.value.line == 2
    feed_stdin(monkeypatch, b"q1 0 d1 1\nq2 0 d1 2\n")
    assert load_qrels("-").to_dict() == {"q1": {"d1": 1}, "q2": {"d1": 2}}


def test_stdin_through_a_real_pipe(tmp_path) -> None:
    code = ("from rankproof.data import load_run; r = load_run('-'); "
            "print(r.name, sorted(r.to_dict().items()))")
    out = subprocess.run([sys.executable, "-c", code], input=gzip.compress(TREC_RUN),
                         capture_output=True, check=True, cwd=tmp_path).stdout.decode()
    assert out.strip() == f"stdin {sorted(EXPECTED.items())}"


# -- gzip by content --------------------------------------------------------------------


def test_gzip_is_detected_by_content_not_name(write) -> None:
    # A gzip file named .txt, and a plain file named .gz: both read correctly.
    zipped = write("run.txt", gzip.compress(TREC_RUN))
    plain = write("run.trec.gz", TREC_RUN)
    assert read_trec_run(zipped).to_dict() == EXPECTED
    assert read_trec_run(plain).to_dict() == EXPECTED
    assert Input.open(zipped).gzipped and not Input.open(plain).gzipped
    jsonl = write("r.json", gzip.compress(b'{"q": {"d": 1.0}}'))
    assert read_json_run(jsonl).to_dict() == {"q": {"d": 1.0}}


def test_corrupt_gzip_is_an_input_error(monkeypatch) -> None:
    feed_stdin(monkeypatch, gzip.compress(TREC_RUN)[:-12])
    with pytest.raises(InputError, match="not a valid gzip stream") as err:
        load_run("-")
    assert err.value.path == "<stdin>"


# -- BOM and UTF-8 ----------------------------------------------------------------------


@pytest.mark.parametrize("reader", [read_trec_run, read_trec_qrels, read_json_run,
                                    read_jsonl_run, read_beir_qrels])
def test_a_bom_is_dropped_by_every_reader(reader, write) -> None:
    content = {
        read_trec_run: TREC_RUN,
        read_trec_qrels: b"q1 0 d1 1\n",
        read_json_run: b'{"q1": {"d1": 1.0}}',
        read_jsonl_run: b'{"qid": "q1", "docid": "d1", "score": 1}\n',
        read_beir_qrels: b"query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    }[reader]
    plain = reader(write("plain", content))
    with_bom = reader(write("bom", b"\xef\xbb\xbf" + content))
    assert with_bom.to_dict() == plain.to_dict()
    assert "q1" in plain.to_dict()


def test_bom_and_extra_columns_are_defined_once() -> None:
    """One text reader: the BOM bytes and ``ExtraColumns`` are spelled in one module."""
    bom = re.compile(r"\\xef\\xbb\\xbf|_BOM\s*=|BOM\s*=")
    extra = re.compile(r"^ExtraColumns\s*=", re.M)
    where_bom, where_extra = [], []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(SRC).as_posix()
        if bom.search(text):
            where_bom.append(rel)
        if extra.search(text):
            where_extra.append(rel)
    assert [p for p in where_bom if p.startswith(("data/", "corpus/"))] == ["data/_text.py"]
    assert where_extra == ["data/_text.py"]


def test_invalid_utf8_names_line_and_byte(write, located) -> None:
    path = write("r.jsonl", b'{"qid": "q", "docid": "a", "score": 1}\r\n{"qid": "q\xff"}\n')
    with pytest.raises(InputError, match=r"invalid UTF-8 \(invalid start byte\) at byte 11 "
                                         "of the line") as err:
        read_jsonl_run(path)
    located(err.value, path, 2, None)


# -- OSError wrapping -------------------------------------------------------------------


@pytest.mark.parametrize("loader", [load_run, load_qrels, read_trec_run, read_beir_qrels,
                                    read_json_run, read_jsonl_run, Input.open])
def test_missing_file_and_directory_are_input_errors(loader, tmp_path) -> None:
    missing = tmp_path / "runs" / "x.txt"
    with pytest.raises(InputError, match="no such file") as err:
        loader(missing)
    assert err.value.path == str(missing)
    assert str(err.value) == f"{missing}: no such file"
    with pytest.raises(InputError, match="is a directory, expected a file") as err:
        loader(tmp_path)
    assert err.value.path == str(tmp_path)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs POSIX permissions and a non-root user")
def test_unreadable_file_is_an_input_error(write) -> None:
    path = write("r.txt", TREC_RUN)
    path.chmod(0)
    try:
        with pytest.raises(InputError, match="permission denied") as err:
            load_run(path)
        assert err.value.path == str(path)
    finally:
        path.chmod(0o644)


# -- the one JSONL reader ---------------------------------------------------------------


def test_duplicate_key_in_a_jsonl_object(write, located) -> None:
    # json.loads would keep "d2" silently; the fast path must not either.
    path = write("r.jsonl", '{"qid": "q", "docid": "d1", "score": 1}\n'
                            '{"qid": "q", "docid": "d1", "docid": "d2", "score": 2}\n'
                            '{"qid": "q", "docid": "d3", "score": 3}\n')
    with pytest.raises(InputError, match="duplicate key 'docid'") as err:
        read_jsonl_run(path)
    located(err.value, path, 2, None)
    spaced = write("s.jsonl", '{"qid": "q", "docid" : "d1", "score": 1}\n'
                              '{"qid": "q", "docid": "d2", "score": 2, "score": 3}\n')
    with pytest.raises(InputError, match="duplicate key 'score'"):
        read_jsonl_run(spaced)


def test_read_jsonl_policy(write, located) -> None:
    path = write("x.jsonl", b'\xef\xbb\xbf{"a": 1}\n\n   \n{"b": [1, 2]}\n')
    assert list(read_jsonl(path)) == [(1, {"a": 1}), (4, {"b": [1, 2]})]
    empty = write("e.jsonl", "\n \n")
    with pytest.raises(InputError, match="the file is empty"):
        list(read_jsonl(empty))
    assert list(read_jsonl(empty, allow_empty=True)) == []
    deep = write("d.jsonl", "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(InputError, match="invalid JSON: nested too deeply") as err:
        list(read_jsonl(deep))
    located(err.value, deep, 1, None)
    array = write("a.jsonl", '{"a": 1}\n[1]\n')
    with pytest.raises(InputError, match="expected a JSON object, found an array; a JSON "
                                         "Lines file holds one JSON object per line"):
        list(read_jsonl(array))
