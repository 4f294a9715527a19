"""`rankproof.jobs.measure_files`: the library verb that `measure` and `compare` adapt.

It is called here as a user's script would: a request of paths and settings, no command
line, nothing printed. Its numbers are `rankproof.measures.evaluate`'s over the runs read
whole, on trec_eval's own test files; its notes reach the caller and the result.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import rankproof.jobs._capped as capped
from rankproof import InputError
from rankproof.data import load_qrels, load_run
from rankproof.engine import LocalExecutor
from rankproof.jobs import Note, RunFilesRequest, measure_files
from rankproof.measures import EvalOptions, evaluate, resolve_measures

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec_eval_tests"
QRELS, RUN = DATA / "qrels.test", DATA / "results.test"
pytestmark = pytest.mark.skipif(not RUN.exists(), reason="../shared/data is not present")
MEASURES = resolve_measures(["AP nDCG@10 P@5 RR"])


def test_the_verb_gives_evaluate_s_numbers_and_prints_nothing(
        capsys: pytest.CaptureFixture[str]) -> None:
    done = measure_files(RunFilesRequest(qrels=str(QRELS), runs=(str(RUN),), measures=MEASURES))
    expected = evaluate(load_qrels(str(QRELS)), load_run(str(RUN)), MEASURES)
    (got,) = done.runs
    assert got.per_query.qids == expected.qids
    np.testing.assert_array_equal(got.per_query.values, expected.values)
    assert list(done.tables) == [got.per_query.run_name] and done.notes == ()
    assert capsys.readouterr() == ("", "")


def test_the_settings_travel_to_the_evaluation() -> None:
    options = EvalOptions(rel_level=2, topics="intersection", max_retrieved=5)
    done = measure_files(RunFilesRequest(qrels=str(QRELS), runs=(str(RUN),), measures=MEASURES,
                                         options=options))
    q, run = load_qrels(str(QRELS)), load_run(str(RUN))
    expected = evaluate(q, options.limited(run, q), MEASURES, **options.keywords())
    np.testing.assert_array_equal(done.runs[0].per_query.values, expected.values)
    plain = measure_files(RunFilesRequest(qrels=str(QRELS), runs=(str(RUN),), measures=MEASURES))
    assert not np.array_equal(plain.runs[0].per_query.values, expected.values)


def test_runs_are_named_by_the_one_rule(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(RUN, tmp_path / folder / "run.txt")
    two = (str(tmp_path / "a" / "run.txt"), str(tmp_path / "b" / "run.txt"))
    # Both carry the same tag, so their paths, made unique, name them.
    done = measure_files(RunFilesRequest(qrels=str(QRELS), runs=two, measures=MEASURES))
    assert [r.per_query.run_name for r in done.runs] == ["a/run", "b/run"]
    named = measure_files(RunFilesRequest(qrels=str(QRELS), runs=two, measures=MEASURES,
                                          names=("x", "y")), LocalExecutor(workers=2))
    assert list(named.tables) == ["x", "y"]
    with pytest.raises(InputError, match="is given twice"):
        measure_files(RunFilesRequest(qrels=str(QRELS), runs=(two[0], two[0]),
                                      measures=MEASURES))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"runs": ("-", "-")}, "standard input"),
    ({"names": ("only-one",)}, "--name is given 1 time"),
    ({"evidence_depth": -1}, "evidence depth"),
    ({"partitions": 0}, "partitions"),
])
def test_a_bad_request_is_refused_when_it_is_made(kwargs: dict[str, object],
                                                  message: str) -> None:
    """Refused at construction: before a qrels path (here one that does not exist) is read."""
    fields: dict[str, object] = {"qrels": "/nonexistent/qrels", "runs": ("a.run", "b.run"),
                                 "measures": MEASURES, **kwargs}
    with pytest.raises(InputError, match=message):
        RunFilesRequest(**fields)  # type: ignore[arg-type]


def test_a_note_reaches_the_caller_as_it_arises_and_the_result(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The automatic cap's note: `notify` hears it, the result keeps it, nothing is printed."""
    monkeypatch.setattr(capped, "available_memory", lambda: 2 << 20)
    big = DATA.parent / "rankllm_runs" / "REP_LLAMA" / "trec_results_dl19.txt"
    qrels = DATA.parent / "trec_dl" / "qrels.dl19-passage.txt"
    if not big.exists():
        pytest.skip("the DL19 run is not present")
    heard: list[tuple[str, str | None]] = []
    done = measure_files(RunFilesRequest(qrels=str(qrels), runs=(str(big),), measures=MEASURES),
                         notify=lambda text, about: heard.append((text, about)))
    assert heard and "streamed as under --memory-cap 2 MiB" in heard[0][0]
    assert done.notes[0] == Note(*heard[0]) and len(done.notes) == len(heard)
    assert any("streamed under --memory-cap" in n.text for n in done.notes)
    monkeypatch.setattr(capped, "available_memory", lambda: None)
    again = measure_files(RunFilesRequest(qrels=str(qrels), runs=(str(big),), measures=MEASURES))
    assert again.notes == ()
    np.testing.assert_array_equal(done.runs[0].per_query.values, again.runs[0].per_query.values)
    assert done.runs[0].per_query.qids == again.runs[0].per_query.qids
