"""What a newcomer sees first: short reprs, and per-query results as a DataFrame."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from rankproof import MissingExtraError
from rankproof.data import Qrels, Run
from rankproof.measures import evaluate

QRELS = Qrels.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"x": 2}, "q3": {"y": 1}})
RUN = Run.from_dict({"q1": {"a": 0.9, "b": 0.5, "c": 0.1}, "q2": {"z": 1.0, "x": 0.2}},
                    name="bm25")


def test_short_reprs() -> None:
    assert repr(RUN) == "Run('bm25', 2 topics, 5 rows)"
    assert repr(QRELS) == "Qrels(3 topics, 4 judgments)"
    pq = evaluate(QRELS, RUN, ["nDCG@10", "RR"])
    assert repr(pq) == "PerQuery('bm25', 3 topics × 2 measures: nDCG@10, RR)"
    many = evaluate(QRELS, RUN, "official")
    assert repr(many) == ("PerQuery('bm25', 3 topics × 28 measures: NumRet, NumRel, NumRelRet, "
                          "AP, GMAP, Rprec and 22 more)")


def test_thousands_are_grouped_in_reprs() -> None:
    n = 1234
    run = Run.from_columns(["q"] * n, [f"d{i}" for i in range(n)],
                           np.arange(n, dtype=np.float64), name="big")
    assert repr(run) == "Run('big', 1 topic, 1,234 rows)"
    assert repr(evaluate(Qrels.from_dict({"q": {"d1": 1}}), run, "RR")) == (
        "PerQuery('big', 1 topic × 1 measure: RR)")


def test_per_query_to_pandas_is_qids_by_measures() -> None:
    pd = pytest.importorskip("pandas")
    pq = evaluate(QRELS, RUN, ["RR", "P@2", "NumRet"])
    df = pq.to_pandas()
    assert list(df.columns) == ["RR", "P@2", "NumRet"]
    assert df.index.name == "qid" and list(df.index) == ["q1", "q2", "q3"]
    assert df.loc["q2", "RR"] == 0.5 and df.loc["q3", "NumRet"] == 0.0
    np.testing.assert_array_equal(df.to_numpy(), pq.values)
    assert df["RR"].mean() == pytest.approx(pq.mean("RR"))
    df.loc["q1", "RR"] = 9.0  # the frame is the caller's copy; the result stays frozen
    assert pq.scores("RR")["q1"] == 1.0
    assert isinstance(df, pd.DataFrame)


def test_to_pandas_without_pandas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` fail
    with pytest.raises(MissingExtraError, match=r"pip install 'rankproof\[pandas\]'"):
        evaluate(QRELS, RUN, "RR").to_pandas()


def test_evaluate_takes_dicts_and_frames_qrels_first() -> None:
    from rankproof import InputError

    want = evaluate(QRELS, RUN, ["RR", "nDCG@10", "P@2"])
    from_dicts = evaluate(QRELS.to_dict(), {"q1": {"a": 0.9, "b": 0.5, "c": 0.1},
                                            "q2": {"z": 1.0, "x": 0.2}}, ["RR", "nDCG@10", "P@2"])
    assert from_dicts.qids == want.qids
    np.testing.assert_array_equal(from_dicts.values, want.values)
    pytest.importorskip("pandas")
    from_frames = evaluate(QRELS.to_pandas(), RUN.to_pandas(), ["RR", "nDCG@10", "P@2"])
    np.testing.assert_array_equal(from_frames.values, want.values)
    with pytest.raises(InputError, match="expected a Qrels"):
        evaluate([("q1", "a", 1)], RUN)
    with pytest.raises(InputError, match="expected a Run"):
        evaluate(QRELS, "run.txt")
