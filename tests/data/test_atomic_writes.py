"""Writers are atomic (DESIGN invariant 6): a rejected input or a failure part-way
leaves no file, no temporary file, and an existing target untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rankproof import InputError
from rankproof._io import atomic_write
from rankproof.data import (
    Qrels,
    Run,
    _beir,
    _jsonio,
    _trec,
    write_beir_qrels,
    write_beir_run,
    write_json_qrels,
    write_json_run,
    write_jsonl_qrels,
    write_jsonl_run,
    write_trec_qrels,
    write_trec_run,
)

RUN = Run.from_dict({"q1": {f"d{i}": float(i) for i in range(50)},
                     "q2": {f"d{i}": float(-i) for i in range(50)}})
QRELS = Qrels.from_dict({"q1": {f"d{i}": i % 3 for i in range(50)}, "q2": {"d1": 1}})

RUN_WRITERS = [write_trec_run, write_beir_run, write_json_run, write_jsonl_run]
QRELS_WRITERS = [write_trec_qrels, write_beir_qrels, write_json_qrels, write_jsonl_qrels]


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_generator_failing_mid_way_leaves_nothing(suffix, tmp_path) -> None:
    def lines() -> Any:
        yield "first\n"
        yield "second\n"
        raise RuntimeError("injected")

    target = tmp_path / f"out.txt{suffix}"
    with pytest.raises(RuntimeError, match="injected"), atomic_write(target) as fh:
        for line in lines():
            fh.write(line)
    assert listing(tmp_path) == []


def test_failure_keeps_the_existing_file(tmp_path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old contents\n")
    with pytest.raises(KeyboardInterrupt), atomic_write(target) as fh:
        fh.write("new")
        raise KeyboardInterrupt
    assert target.read_text() == "old contents\n"
    assert listing(tmp_path) == ["out.txt"]


def test_success_replaces_the_file(tmp_path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    write_trec_run(RUN, target)
    assert target.read_text().startswith("q1 Q0 d49 1 49.0 run\n")
    assert listing(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("tag", ["two words", "tab\there", ""])
def test_invalid_tag_writes_nothing(tag, tmp_path) -> None:
    with pytest.raises(InputError, match="tag") as err:
        write_trec_run(Run.from_dict({"q": {"d": 1.0}}, name=tag or ""), tmp_path / "x.run",
                       tag=tag or None)
    assert err.value.field == "tag"
    assert listing(tmp_path) == []


@pytest.mark.parametrize("writer", RUN_WRITERS + QRELS_WRITERS, ids=lambda w: w.__name__)
def test_writer_failing_part_way_leaves_nothing(writer, tmp_path, monkeypatch) -> None:
    """Break each writer after a few rows by making the file's ``write`` fail."""
    import rankproof._io as io_module

    real = io_module.atomic_write

    class Exploding:
        def __init__(self, fh: Any) -> None:
            self.fh = fh
            self.calls = 0

        def write(self, text: str) -> int:
            self.calls += 1
            if self.calls > 3:
                raise OSError("disk full (injected)")
            return int(self.fh.write(text))

    def exploding_atomic_write(path: Any, *args: Any, **kwargs: Any) -> Any:
        import contextlib

        @contextlib.contextmanager
        def cm() -> Any:
            with real(path, *args, **kwargs) as fh:
                yield Exploding(fh)

        return cm()

    for module in (_trec, _beir, _jsonio):
        monkeypatch.setattr(module, "atomic_write", exploding_atomic_write)
    target = tmp_path / "out.file"
    target.write_text("previous\n")
    data = RUN if writer in RUN_WRITERS else QRELS
    if writer in (write_json_run, write_json_qrels):
        # These serialise first and write twice (text, newline): fail the second write.
        monkeypatch.setattr(Exploding, "write", _fail_on_second)
    with pytest.raises(OSError, match="injected"):
        writer(data, target)
    assert target.read_text() == "previous\n"
    assert listing(tmp_path) == ["out.file"]


def _fail_on_second(self: Any, text: str) -> int:
    self.calls += 1
    if self.calls > 1:
        raise OSError("disk full (injected)")
    return int(self.fh.write(text))


def test_trec_writer_exception_from_formatting(tmp_path, monkeypatch) -> None:
    calls = {"n": 0}
    real = _trec._format_score

    def flaky(value: float) -> str:
        calls["n"] += 1
        if calls["n"] == 10:
            raise ValueError("injected")
        return real(value)

    monkeypatch.setattr(_trec, "_format_score", flaky)
    with pytest.raises(ValueError, match="injected"):
        write_trec_run(RUN, tmp_path / "x.run.gz")
    assert listing(tmp_path) == []


@pytest.mark.parametrize(("writer", "data"), [
    (write_trec_run, Run.from_dict({"q1": {"ok": 1.0}, "q 2": {"d": 1.0}})),
    (write_trec_qrels, Qrels.from_dict({"q1": {"ok": 1}, "q2": {"bad id": 1}})),
    (write_beir_qrels, Qrels.from_dict({"q1": {"ok": 1}, "q2": {"bad\tid": 1}})),
    (write_beir_run, Run.from_dict({"q1": {"ok": 1.0}, "q2": {'"quoted"': 1.0}})),
])
def test_invalid_ids_are_refused_before_the_first_byte(writer, data, tmp_path) -> None:
    with pytest.raises(InputError):
        writer(data, tmp_path / "out")
    assert listing(tmp_path) == []


def test_written_files_follow_the_umask_and_gzip_is_reproducible(tmp_path: Path) -> None:
    import gzip
    import os

    from rankproof._io import atomic_write

    old = os.umask(0o022)
    try:
        digests = []
        for name in ("a.txt.gz", "b.txt.gz"):
            with atomic_write(tmp_path / name) as fh:
                fh.write("q1 0 d1 1\n")
            digests.append((tmp_path / name).read_bytes())
            assert (tmp_path / name).stat().st_mode & 0o777 == 0o644
        assert digests[0] == digests[1]  # no file name or time in the gzip header
        assert gzip.decompress(digests[0]) == b"q1 0 d1 1\n"
    finally:
        os.umask(old)
