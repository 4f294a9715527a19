"""The one-pass read of TREC files: plainness is checked while Arrow reads.

A plain file (ASCII, one delimiter) is parsed reading only the needed
columns; a file that turns out not to be plain — even only in its last block —
is read again with every column validated, or by the careful path. Every
route must build the same `Run`/`Qrels` a line-by-line parse builds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankproof._errors import InputError
from rankproof.data import Run, _stream, read_trec_qrels, read_trec_run


def _lines(sep: str = " ", topics: int = 300) -> list[str]:
    rng = np.random.default_rng(7)
    lines = []
    for t in range(topics):  # ~3 MB: several blocks, topics straddling blocks
        qid = f"q{rng.integers(0, 10**6)}-{t}"
        docs = rng.choice(10**6, size=250, replace=False)
        scores = np.sort(rng.random(250))[::-1]
        lines += [sep.join([qid, "Q0", f"doc{d:07d}", str(r + 1), repr(float(s)), "tag"])
                  for r, (d, s) in enumerate(zip(docs, scores, strict=True))]
    return lines


def _by_hand(lines: list[str]) -> Run:
    fields = [line.split() for line in lines]
    return Run.from_columns([f[0] for f in fields], [f[2] for f in fields],
                            np.array([float(f[4]) for f in fields]),
                            np.array([int(f[3]) for f in fields]), name="x")


def _same(a: Run, b: Run) -> None:
    assert a.to_arrow().equals(b.to_arrow())
    assert a.qid_vocab.equals(b.qid_vocab)
    assert np.array_equal(a.qid_codes, b.qid_codes)
    assert a.ranks is not None and b.ranks is not None
    assert np.array_equal(a.ranks, b.ranks)


@pytest.mark.parametrize("sep", [" ", "\t"])
def test_plain_file_matches_a_line_by_line_parse(tmp_path: Path, sep: str) -> None:
    lines = _lines(sep)
    path = tmp_path / "big.run"
    path.write_text("\n".join(lines) + "\n")
    run = read_trec_run(path)
    assert len(run) == 300 * 250
    _same(run, _by_hand(lines))


def test_a_non_ascii_docid_in_the_last_block_is_read_exactly(tmp_path: Path) -> None:
    lines = _lines(topics=400)  # > 4 MiB: the é sits past the first block
    lines[-1] = lines[-1].replace("doc", "docé", 1)
    path = tmp_path / "late.run"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert path.stat().st_size > 4 << 20
    run = read_trec_run(path)
    assert run.docids[len(run) - 1].as_py().startswith("docé")
    _same(run, _by_hand(lines))


def test_a_tab_inside_a_field_in_the_last_block_is_split_as_trec_eval_does(
        tmp_path: Path) -> None:
    lines = _lines(topics=400)
    lines[-1] = lines[-1] + "\textra"  # a seventh field, only visible by splitting on tabs
    path = tmp_path / "tab.run"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="line 100000"):
        read_trec_run(path)


def test_plainness_checks_single_bytes(tmp_path: Path) -> None:
    assert _stream.is_plain(b"1 Q0 d 1 2.0 t\n", " ")
    assert not _stream.is_plain(b"1 Q0 d\t1 2.0 t\n", " ")
    assert not _stream.is_plain("1 Q0 é 1 2.0 t\n".encode(), " ")
    assert _stream.is_plain(b"1\tQ0\td\t1\t2.0\tt\r\n", "\t")
    path = tmp_path / "f"
    path.write_bytes(b"a b\n" * 10 + b"\x00")
    with _stream.PlainScan(str(path), " ") as scan:
        pass
    assert not scan.plain
    path.write_bytes(b"a b\n" * (_stream.SCAN_BLOCK // 4 + 10))  # more than one block
    with _stream.PlainScan(str(path), " ") as scan:
        pass
    assert scan.plain
    with _stream.PlainScan(str(path), "\t") as scan:  # a space is foreign in a tab file
        pass
    assert not scan.plain


def test_a_stopped_or_failed_scan_is_never_plain(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a b\n" * 100)
    with _stream.PlainScan(str(path), " ") as scan:
        scan.stop()
    assert not scan.plain
    with pytest.raises(KeyError), _stream.PlainScan(str(path), " ") as scan:
        raise KeyError("the parse failed")
    assert not scan.plain
    with _stream.PlainScan(str(tmp_path / "missing"), " ") as scan:
        pass
    assert not scan.plain


def test_arrow_is_handed_only_native_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    """No Python object reaches Arrow's threads (issue 28): they would take the GIL to call
    or release it, and a thread that does so while the interpreter finalizes aborts the
    process."""
    import pyarrow as pa

    from rankproof.data import Input, _trec

    seen: list[object] = []
    real = _trec.pa_csv.read_csv

    def spy(source: object, **kwargs: object) -> object:
        seen.append(source)
        return real(source, **kwargs)

    monkeypatch.setattr(_trec.pa_csv, "read_csv", spy)
    path = tmp_path / "r.run"
    path.write_text("".join(f"q{q} Q0 d{d} {d} {10 - d} t\n" for q in range(3) for d in range(5)))
    accented = tmp_path / "a.run"
    accented.write_text("q1 Q0 dé 1 2.0 t\n", encoding="utf-8")
    read_trec_run(path)
    read_trec_run(accented)  # not plain: read again, validated
    read_trec_run(Input.from_bytes(path.read_bytes(), "bytes"))
    assert len(seen) == 4
    for source in seen:
        assert isinstance(source, str | pa.NativeFile), type(source)
        # A Python file object would be wrapped in a PythonFile; a native one is Arrow's own.
        assert not isinstance(source, pa.PythonFile), type(source)
        assert isinstance(source, str) or type(source).__module__ == "pyarrow.lib", type(source)


def test_bytes_are_copied_into_arrows_pool() -> None:
    data = b"q1 Q0 d1 1 2.0 t\n" * 3
    buf = _stream.arrow_owned(data)
    assert buf.to_pybytes() == data
    assert buf.address != _stream.pa.py_buffer(data).address
    assert len(_stream.arrow_owned(b"")) == 0


def test_qrels_plain_and_not(tmp_path: Path) -> None:
    plain = tmp_path / "q.txt"
    plain.write_text("".join(f"{q} 0 d{d} {d % 3}\n" for q in range(50) for d in range(40)))
    qrels = read_trec_qrels(plain)
    assert len(qrels) == 2000 and sorted(set(qrels.rels.tolist())) == [0, 1, 2]
    accented = tmp_path / "a.txt"
    accented.write_text("1 0 é 1\n1 0 d 0\n", encoding="utf-8")
    assert read_trec_qrels(accented).docids.to_pylist() == ["é", "d"]
