"""`cross_check`: rankproof against ir_measures and pytrec_eval on the real TREC DL runs.

Expected values are not typed in here: the second evaluator computes them, from the same
qrels and the same ranking, and every per-topic value and every aggregate must agree.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from rankproof import InputError, MissingExtraError
from rankproof.data import Qrels, Run, load_qrels, load_run, write_trec_qrels
from rankproof.measures import CrossCheck, cross_check, evaluate
from rankproof.measures import _crossbackends as backends

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
RUNS = DATA / "rankllm_runs"
QRELS = {"dl19": DATA / "trec_dl" / "qrels.dl19-passage.txt",
         "dl20": DATA / "trec_dl" / "qrels.dl20-passage.txt"}
SYSTEMS = ("BM25", "BM25_RM3", "D_BERT_KD_TASB", "OPEN_AI_ADA2", "REP_LLAMA",
           "SPLADE_P_P_ENSEMBLE_DISTIL")
SHARED = ("nDCG@10", "RR@10", "AP", "R@100", "P@10", "Rprec", "Bpref", "Success@10",
          "Judged@10", "NumRet", "NumRel", "NumRelRet")
"""The measures the issue names; each backend computes all but the ones listed below."""
CANNOT = {("pytrec-eval", 1): {"Judged@10"}, ("pytrec-eval", 2): {"Judged@10"},
          ("ir-measures", 1): set(), ("ir-measures", 2): {"NumRel"}}


@cache
def _qrels(year: str) -> Qrels:
    return load_qrels(QRELS[year])


@cache
def _runs(year: str) -> tuple[Run, ...]:
    return tuple(load_run(RUNS / s / f"trec_results_{year}.txt", name=s) for s in SYSTEMS)


@pytest.mark.parametrize("backend", ["ir-measures", "pytrec-eval"])
@pytest.mark.parametrize("year", ["dl19", "dl20"])
@pytest.mark.parametrize("rel_level", [1, 2])
def test_every_shared_measure_agrees_to_1e_9(backend: str, year: str, rel_level: int) -> None:
    cc = cross_check(_qrels(year), _runs(year), SHARED, backend=backend, rel_level=rel_level,
                     tolerance=1e-9)
    assert cc.backend == backend and cc.backend_version
    assert cc.passed is True and cc.status == "passed"
    assert cc.max_delta is not None and cc.max_delta <= 1e-9
    cannot = CANNOT[(backend, rel_level)]
    n_topics = len(_qrels(year).topics)
    for r in cc.runs:
        assert set(r.unchecked) == cannot, r.run  # listed, never dropped
        assert set(r.checked) == set(SHARED) - cannot
        assert len(r.qids) == n_topics and r.zero_filled == ()
        for m in r.checked:
            assert float(r.deltas(m).max()) <= 1e-9, (r.run, m)
            assert r.mean_delta(m) <= 1e-9, (r.run, m)
    # REP_LLAMA's scores are rounded to 3 decimals: thousands of ties, one ranking for both.
    assert next(r for r in cc.runs if r.run == "REP_LLAMA").tied_pairs > 10_000


def test_the_record_holds_both_sets_deltas_and_sources() -> None:
    cc = cross_check(_qrels("dl19"), _runs("dl19")[4:5], SHARED, backend="ir-measures",
                     rel_level=2)
    doc = json.loads(json.dumps(cc.to_dict()))  # JSON-serialisable as is
    assert doc["backend"] == "ir-measures" and doc["status"] == "passed"
    assert doc["tolerance"] == 1e-4 and doc["relevance"]["rel_level"] == 2
    assert doc["relevance"]["labels"] == [0, 1, 2, 3]
    assert doc["qrels"] == {"path": str(QRELS["dl19"]), "digest": _qrels("dl19").digest}
    assert "linear" in doc["gain"] and "1/rank" in doc["ranking"]
    run = doc["runs"][0]
    assert run["run"] == "REP_LLAMA" and run["coverage"]["topics"] == 43
    assert run["backend_names"]["P@10"] == "P(rel=2)@10"
    assert run["backend_names"]["NumRelRet"] == "NumRet(rel=2)"
    assert run["relevance"]["nDCG@10"] is None and run["relevance"]["AP"] == 2
    pq = evaluate(_qrels("dl19"), _runs("dl19")[4], SHARED, rel_level=2)
    assert run["means"]["rankproof"]["nDCG@10"] == pq.aggregate("nDCG@10")
    assert run["per_topic"]["rankproof"]["AP"] == pq.column("AP").tolist()
    assert len(run["per_topic"]["backend"]["AP"]) == 43
    assert max(run["per_topic"]["delta"]["AP"]) <= 1e-9
    assert run["unchecked"] == {"NumRel": "ir_measures computes NumRel at relevance level 1 only"}


@pytest.mark.parametrize("backend", ["ir-measures", "pytrec-eval"])
def test_a_planted_disagreement_fails(backend: str, tmp_path: Path) -> None:
    """The backend alone gets judgments with one relevant document made non-relevant."""
    qrels = _qrels("dl19")
    table = qrels.to_dict()
    topic = "1037798"
    doc = next(d for d, rel in table[topic].items() if rel >= 2)
    table[topic][doc] = 0
    planted = tmp_path / "planted.qrels"
    write_trec_qrels(Qrels.from_dict(table), planted)
    run = _runs("dl19")[0]
    cc = cross_check(qrels, [run], ["nDCG@10", "AP", "P@10"], backend=backend,
                     backend_qrels=planted)
    assert cc.passed is False and cc.status == "failed"
    assert cc.backend_qrels is not None and cc.backend_qrels["path"] == str(planted)
    result = cc.runs[0]
    assert {"nDCG@10", "AP"} <= set(result.failed)
    assert result.worst is not None and result.worst["topic"] in (topic, "all")
    i = result.qids.index(topic)
    assert result.deltas("AP")[i] > 1e-4
    others = np.delete(result.deltas("AP"), i)
    assert float(others.max()) == 0.0  # only the planted topic moved
    # The same check without the planted copy passes.
    assert cross_check(qrels, [run], ["nDCG@10", "AP", "P@10"], backend=backend).passed


def test_auto_without_a_backend_records_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    def unimportable(module: str) -> object:
        raise ImportError(f"No module named {module!r}")

    monkeypatch.setattr(backends, "_import", unimportable)
    cc = cross_check(_qrels("dl19"), _runs("dl19")[:1], ["nDCG@10"], backend="auto")
    assert isinstance(cc, CrossCheck)
    assert cc.backend == "unavailable" and cc.passed is None and cc.status == "unavailable"
    assert cc.runs == () and cc.max_delta is None
    doc = cc.to_dict()
    assert doc["backend"] == "unavailable" and doc["passed"] is None
    assert "rankproof[crosscheck]" in doc["note"]
    # Naming a backend that is not there is an error the user can fix (exit 2 in the CLI).
    with pytest.raises(MissingExtraError, match=r"'ir-measures' is not installed.*crosscheck"):
        cross_check(_qrels("dl19"), _runs("dl19")[:1], ["nDCG@10"], backend="ir-measures")


def test_auto_prefers_ir_measures_then_pytrec_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cross_check(_qrels("dl19"), _runs("dl19")[:1], ["AP"]).backend == "ir-measures"
    real = backends._import

    def no_ir_measures(module: str) -> object:
        if module == "ir_measures":
            raise ImportError("No module named 'ir_measures'")
        return real(module)

    monkeypatch.setattr(backends, "_import", no_ir_measures)
    assert cross_check(_qrels("dl19"), _runs("dl19")[:1], ["AP"]).backend == "pytrec-eval"


def test_measures_a_backend_cannot_compute_are_listed() -> None:
    cc = cross_check(_qrels("dl19"), _runs("dl19")[:1],
                     ["nDCG(gain=exp)@10", "Judged@10", "nDCG@10"], backend="pytrec-eval")
    r = cc.runs[0]
    assert r.checked == ("nDCG@10",)
    assert r.unchecked == {
        "nDCG(gain=exp)@10": "pytrec_eval computes nDCG with linear gains only",
        "Judged@10": "pytrec_eval has no Judged@10 measure",
    }
    assert set(cc.to_dict()["runs"][0]["unchecked"]) == {"nDCG(gain=exp)@10", "Judged@10"}
    # ir_measures computes exponential gains through gdeval, which rounds to 5 decimals:
    # checked, and within the default tolerance, not within 1e-9.
    irm = cross_check(_qrels("dl19"), _runs("dl19")[:1], ["nDCG(gain=exp)@10"],
                      backend="ir-measures").runs[0]
    assert irm.checked == ("nDCG(gain=exp)@10",) and "gdeval" in irm.backend_names[
        "nDCG(gain=exp)@10"]
    assert irm.max_delta is not None and 1e-9 < irm.max_delta <= 1e-4


def test_topics_the_backend_skips_are_filled_on_its_side_and_listed() -> None:
    """pytrec_eval returns only topics the run has; rankproof scores every qrels topic."""
    full = _runs("dl19")[0]
    table = full.to_dict()
    dropped = ["1037798", "104861"]
    for q in dropped:
        del table[q]
    partial = Run.from_dict(table, name="partial")
    cc = cross_check(_qrels("dl19"), [partial], ["nDCG@10", "NumRel", "NumRet"],
                     backend="pytrec-eval", tolerance=1e-9)
    r = cc.runs[0]
    assert cc.passed and r.zero_filled == tuple(dropped)
    i = r.qids.index("1037798")
    assert r.backend["NumRel"][i] == r.rankproof["NumRel"][i] > 0  # qrels count, not 0
    assert r.backend["nDCG@10"][i] == 0.0
    doc = r.to_dict()["coverage"]
    assert doc["zero_filled"] == dropped and doc["backend_returned"] == 41


def test_bad_tolerance_is_refused() -> None:
    with pytest.raises(InputError, match="tolerance must be a finite number >= 0, got -1"):
        cross_check(_qrels("dl19"), _runs("dl19")[:1], ["AP"], tolerance=-1)
    with pytest.raises(InputError, match="backend must be one of auto, ir-measures, "
                                         "pytrec-eval; got 'trec'"):
        cross_check(_qrels("dl19"), _runs("dl19")[:1], ["AP"], backend="trec")
