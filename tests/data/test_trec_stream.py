"""The streaming read of plain TREC files gives what Arrow's ``read_csv`` gives.

Plain files (ASCII, one delimiter) are streamed block by block into
preallocated arrays (``_stream.read_table``); other files, or a stream that
declines, go through ``read_csv``. Both must build the same `Run`/`Qrels`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankproof.data import _stream, read_trec_qrels, read_trec_run


def _write_run(path: Path, sep: str = " ") -> None:
    rng = np.random.default_rng(7)
    lines = []
    for t in range(300):  # ~3 MB: several 1 MiB blocks, topics straddling blocks
        qid = f"q{rng.integers(0, 10**6)}-{t}"
        docs = rng.choice(10**6, size=250, replace=False)
        scores = np.sort(rng.random(250))[::-1]
        lines += [sep.join([qid, "Q0", f"doc{d:07d}", str(r + 1), repr(float(s)), "tag"])
                  for r, (d, s) in enumerate(zip(docs, scores, strict=True))]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("sep", [" ", "\t"])
def test_stream_matches_read_csv(tmp_path: Path, sep: str) -> None:
    path = tmp_path / "big.run"
    _write_run(path, sep)
    assert _stream.plain_scan(str(path), sep) == path.stat().st_size
    streamed = read_trec_run(path)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_stream, "read_table", lambda *a, **k: None)
        m.setattr("rankproof.data._trec.read_table", lambda *a, **k: None)
        arrow = read_trec_run(path)
    assert streamed.to_arrow().equals(arrow.to_arrow())
    assert streamed.qid_vocab.equals(arrow.qid_vocab)
    assert np.array_equal(streamed.qid_codes, arrow.qid_codes)
    assert streamed.ranks is not None and arrow.ranks is not None
    assert np.array_equal(streamed.ranks, arrow.ranks)
    assert len(streamed) == 300 * 250


def test_stream_qrels_and_non_plain(tmp_path: Path) -> None:
    plain = tmp_path / "q.txt"
    plain.write_text("".join(f"{q} 0 d{d} {d % 3}\n" for q in range(50) for d in range(40)))
    qrels = read_trec_qrels(plain)
    assert len(qrels) == 2000 and sorted(set(qrels.rels.tolist())) == [0, 1, 2]
    accented = tmp_path / "a.txt"
    accented.write_text("1 0 é 1\n1 0 d 0\n", encoding="utf-8")
    assert _stream.plain_scan(str(accented), " ") is None  # not ASCII: read_csv path
    assert read_trec_qrels(accented).docids.to_pylist() == ["é", "d"]
