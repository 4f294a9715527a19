"""The evidence a report stores: each system's top ids in the measures' order, the gold, the
query text; inline or in a sidecar whose digest is checked, and refused when malformed."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import rankproof.comparison._evidence as evidence_module
from rankproof import InputError
from rankproof.comparison import (
    Evidence,
    EvidenceSidecar,
    collect_evidence,
    compare,
    load_comparison,
    load_evidence,
    read_queries,
    rows_from_document,
    sidecar_name,
    split_evidence,
)
from rankproof.data import Qrels, Run, arrow_indices, load_qrels, load_run, ranked_order
from rankproof.stats import StatSettings

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
QRELS = SHARED / "trec_dl" / "qrels.dl19-passage.txt"
TOPICS = SHARED / "trec_dl" / "topics.dl19-passage.txt"
SYSTEMS = ("BM25", "REP_LLAMA", "SPLADE_P_P_ENSEMBLE_DISTIL")


@cache
def _qrels() -> Qrels:
    return load_qrels(QRELS)


@cache
def _run(system: str) -> Run:
    return load_run(SHARED / "rankllm_runs" / system / "trec_results_dl19.txt", name=system)


def _first_k(run: Run, k: int, order: str = "score") -> dict[str, list[str]]:
    """The first k ids per query straight from `ranked_order` (the measures' order)."""
    ro = ranked_order(run, order)  # type: ignore[arg-type]
    rows = ro.row_ids(len(run))
    keep = np.flatnonzero(ro.positions < k)
    qids = run.qid_vocab.take(arrow_indices(run.qid_codes[rows[keep]])).to_pylist()
    docids = run.docids.take(arrow_indices(rows[keep])).to_pylist()
    out: dict[str, list[str]] = {}
    for q, d in zip(qids, docids, strict=True):
        out.setdefault(q, []).append(d)
    return out


@cache
def _evidence(k: int = 10) -> Evidence:
    return collect_evidence(_qrels(), {s: _run(s) for s in SYSTEMS}, k=k,
                            queries=read_queries(TOPICS))


# -- collecting ----------------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 10, 100])
def test_top_is_the_first_k_of_the_measures_order_on_real_runs(k: int) -> None:
    ev = collect_evidence(_qrels(), {s: _run(s) for s in SYSTEMS}, k=k)
    assert ev.k == k and list(ev.top) == list(SYSTEMS)
    for system in SYSTEMS:
        expected = _first_k(_run(system), k)
        assert ev.top[system] == {q: expected.get(q, []) for q in _qrels().topics}
        assert all(len(ids) == min(k, 100 if system != "REP_LLAMA" else 1000)
                   for ids in ev.top[system].values())


def test_ties_are_broken_by_docid_descending_not_by_the_file() -> None:
    # REP_LLAMA's query 1037798 ranks 8760866 second in the file and ties it (0.854) with
    # 8760871 and 8760870: trec_eval's order (and the evidence) puts the largest id first.
    top = _evidence().top["REP_LLAMA"]["1037798"]
    assert top[:4] == ["3620986", "8760871", "8760870", "8760866"]
    assert ranked_order(_run("REP_LLAMA")).n_ties > 0


def test_order_rank_follows_the_rank_column() -> None:
    run = _run("REP_LLAMA")
    by_rank = collect_evidence(_qrels(), {"r": run}, k=10, order="rank").top["r"]
    expected = _first_k(run, 10, "rank")
    assert by_rank == {q: expected.get(q, []) for q in _qrels().topics}
    assert by_rank["1037798"][:3] == ["3620986", "8760866", "8760871"]  # as the file says
    # Reversed scores with the file's ranks: by rank, nothing changes; by score, all does.
    flipped = Run.from_columns(run.qids(), run.docids, -run.scores, run.ranks, name="f")
    assert collect_evidence(_qrels(), {"f": flipped}, k=10, order="rank").top["f"] == by_rank
    by_score = collect_evidence(_qrels(), {"f": flipped}, k=10).top["f"]
    assert by_score != by_rank and by_score == {q: _first_k(flipped, 10).get(q, [])
                                                for q in _qrels().topics}


def test_the_row_order_of_a_run_changes_nothing() -> None:
    run = _run("SPLADE_P_P_ENSEMBLE_DISTIL")
    rows = np.random.default_rng(7).permutation(len(run))
    shuffled = Run.from_columns(run.qids().take(arrow_indices(rows)),
                                run.docids.take(arrow_indices(rows)), run.scores[rows],
                                name="s")
    assert collect_evidence(_qrels(), {"s": shuffled}, k=10).top["s"] == \
        _evidence().top["SPLADE_P_P_ENSEMBLE_DISTIL"]


def test_many_ties_in_an_unsorted_run_match_ranked_order() -> None:
    rng = np.random.default_rng(3)
    qids = [f"q{i % 40}" for i in range(4000)]
    docids = [f"d{i:05d}" for i in rng.permutation(4000)]
    run = Run.from_columns(qids, docids, rng.integers(0, 4, 4000).astype(float), name="t")
    qrels = Qrels.from_dict({f"q{i}": {"d00001": 1} for i in range(40)})
    for k in (1, 5, 30):
        assert collect_evidence(qrels, {"t": run}, k=k).top["t"] == _first_k(run, k)


def test_gold_is_the_qrels_rows_at_the_relevance_level() -> None:
    judged = _qrels().to_dict()
    for level in (1, 2, 3):
        ev = collect_evidence(_qrels(), {"b": _run("BM25")}, k=3, rel_level=level)
        assert ev.gold == {q: {d: r for d, r in docs.items() if r >= level}
                           for q, docs in judged.items()}
    assert _evidence().ids == sum(len(g) for g in _evidence().gold.values()) + sum(
        len(ids) for per_q in _evidence().top.values() for ids in per_q.values())


def test_query_text_topics_and_missing_topics() -> None:
    ev = _evidence()
    assert ev.queries["1037798"] == "who is robert gray"
    assert set(ev.queries) == set(_qrels().topics) == set(ev.gold)
    # A chosen topic list: a topic no run answers gets [], run topics outside it are left out.
    some = collect_evidence(_qrels(), {"b": _run("BM25")}, topics=["1037798", "no-such"],
                            queries={"no-such": "what is nothing"})
    assert list(some.top["b"]) == ["1037798", "no-such"] and some.top["b"]["no-such"] == []
    assert some.gold["no-such"] == {} and some.queries == {"no-such": "what is nothing"}


def test_collect_refuses_bad_arguments() -> None:
    runs = {"b": _run("BM25")}
    with pytest.raises(InputError, match="k must be an integer from 1"):
        collect_evidence(_qrels(), runs, k=0)
    with pytest.raises(InputError, match="order must be"):
        collect_evidence(_qrels(), runs, order="random")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="mapping"):
        collect_evidence(_qrels(), [_run("BM25")])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="one string"):
        collect_evidence(_qrels(), runs, topics="1037798")


# -- the inline form -----------------------------------------------------------------------

def test_round_trip_and_capping() -> None:
    ev = _evidence()
    assert Evidence.from_dict(json.loads(json.dumps(ev.to_dict()))) == ev
    kept, dropped = ev.capped(ev.ids)
    assert kept is ev and dropped == 0
    kept, dropped = ev.capped(500)
    assert 0 < kept.ids <= 500 and dropped == len(ev.topics) - len(kept.topics)
    assert kept.topics == ev.topics[: len(kept.topics)]
    assert all(kept.top[s][q] == ev.top[s][q] for s in kept.top for q in kept.top[s])


@pytest.mark.parametrize(("change", "message", "field"), [
    ({"k": 0}, "from 1 to", "evidence.k"),
    ({"k": True}, "integer", "evidence.k"),
    ({"extra": 1}, "unknown key", "evidence.extra"),
    ({"top": []}, "must be an object", "evidence.top"),
    ({"top": {"s": {"q": ["a", "b", "c"]}}}, "more than k = 2", "evidence.top.s.q"),
    ({"top": {"s": {"q": ["a", "a"]}}}, "same id twice", "evidence.top.s.q"),
    ({"top": {"s": {"q": "a"}}}, "list of document ids", "evidence.top.s.q"),
    ({"top": {"s": {"q": [1]}}}, "list of document ids", "evidence.top.s.q"),
    ({"gold": {"q": {"d": True}}}, "grade must be an integer", "evidence.gold.q.d"),
    ({"gold": {"q": {"d": 1.5}}}, "grade must be an integer", "evidence.gold.q.d"),
    ({"gold": {"q": ["d"]}}, "must be an object", "evidence.gold.q"),
    ({"queries": {"q": 3}}, "text must be a string", "evidence.queries.q"),
])
def test_from_dict_refuses_wrong_shapes_naming_the_field(change: dict[str, object], message: str,
                                                         field: str) -> None:
    doc = {"k": 2, "queries": {}, "gold": {}, "top": {}, **change}
    with pytest.raises(InputError, match=message) as err:
        Evidence.from_dict(doc, path="r.json")
    assert err.value.field == field and err.value.path == "r.json"


def test_from_dict_refuses_a_missing_key_and_a_document_past_the_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="lacks top") as err:
        Evidence.from_dict({"k": 2, "gold": {}})
    assert err.value.field == "evidence.top"
    monkeypatch.setattr(evidence_module, "MAX_EVIDENCE_IDS", 5)
    with pytest.raises(InputError, match="more than 5 ids"):
        Evidence.from_dict({"k": 9, "gold": {}, "top": {"s": {"q": list("abcdefg")}}})


# -- the sidecar ---------------------------------------------------------------------------

def _write_report(folder: Path, ev: Evidence, name: str = "report.json") -> dict[str, object]:
    ref, blob = split_evidence(ev, sidecar_name(folder / name))
    (folder / ref.sidecar).write_bytes(blob)
    doc = {"kind": "rankproof.comparison", "schema_version": 3, "evidence": ref.to_dict()}
    (folder / name).write_text(json.dumps(doc))
    return doc


def test_a_sidecar_round_trips(tmp_path: Path) -> None:
    doc = _write_report(tmp_path, _evidence())
    assert doc["evidence"] == {"sidecar": "report.evidence.json",
                               "sha256": doc["evidence"]["sha256"],  # type: ignore[index]
                               "ids": _evidence().ids, "k": 10}
    assert load_evidence(doc, tmp_path) == _evidence()
    assert load_evidence({"evidence": _evidence().to_dict()}, tmp_path) == _evidence()
    assert load_evidence({"kind": "rankproof.comparison"}, tmp_path) is None
    assert load_evidence({"evidence": None}, tmp_path) is None


def test_a_tampered_sidecar_is_refused_by_its_digest(tmp_path: Path) -> None:
    doc = _write_report(tmp_path, _evidence())
    side = tmp_path / "report.evidence.json"
    side.write_bytes(side.read_bytes().replace(b'"3620986"', b'"0000000"', 1))
    with pytest.raises(InputError, match="digest") as err:
        load_evidence(doc, tmp_path)
    assert err.value.path == str(side)


def _forged(tmp_path: Path, content: bytes, **ref: object) -> dict[str, object]:
    """A sidecar whose digest matches (so the checks after the digest run)."""
    (tmp_path / "f.evidence.json").write_bytes(content)
    digest = "sha256:" + hashlib.sha256(content).hexdigest()
    return {"evidence": {"sidecar": "f.evidence.json", "sha256": digest, "ids": 0, "k": 1,
                         **ref}}


@pytest.mark.parametrize(("content", "message"), [
    (b"{not json", "invalid JSON"),
    (b'{"kind": "rankproof.eval", "schema_version": 1, "k": 1, "gold": {}, "top": {}}',
     "not a rankproof evidence sidecar"),
    (b'{"kind": "rankproof.evidence", "schema_version": 2, "k": 1, "gold": {}, "top": {}}',
     "unsupported evidence schema_version 2"),
    (b'{"kind": "rankproof.evidence", "schema_version": 1, "k": 2, "gold": {}, "top": {}}',
     "the report recorded k = 1"),
    (b'{"kind": "rankproof.evidence", "schema_version": 1, "k": 1, "gold": {}, "top": '
     b'{"s": {"q": ["a", "b"]}}}', "more than k = 1"),
])
def test_a_sidecar_with_a_matching_digest_is_still_checked(tmp_path: Path, content: bytes,
                                                           message: str) -> None:
    with pytest.raises(InputError, match=message) as err:
        load_evidence(_forged(tmp_path, content), tmp_path)
    assert err.value.path == str(tmp_path / "f.evidence.json")


@pytest.mark.parametrize("name", ["../report.evidence.json", "sub/x.json", "/etc/passwd", "..",
                                  "a\\b.json", ""])
def test_a_sidecar_name_that_leaves_the_folder_is_refused(tmp_path: Path, name: str) -> None:
    ref = {"sidecar": name, "sha256": "sha256:" + "0" * 64, "ids": 0, "k": 1}
    with pytest.raises(InputError, match="plain file name") as err:
        load_evidence({"evidence": ref}, tmp_path)
    assert err.value.field == "evidence.sidecar"
    with pytest.raises(InputError, match="plain file name"):
        split_evidence(_evidence(), name)


def test_a_sidecar_link_out_of_the_folder_and_a_missing_one_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    doc = _write_report(outside, _evidence())
    report_dir = tmp_path / "reports"
    report_dir.mkdir()
    (report_dir / "report.evidence.json").symlink_to(outside / "report.evidence.json")
    with pytest.raises(InputError, match="leads elsewhere"):
        load_evidence(doc, report_dir)
    (report_dir / "report.evidence.json").unlink()
    with pytest.raises(InputError, match="no such file") as err:
        load_evidence(doc, report_dir)
    assert err.value.path == str(report_dir / "report.evidence.json")


@pytest.mark.parametrize(("ref", "message"), [
    ({"sha256": "md5:00"}, "sha256"),
    ({"ids": -1}, "from 0"),
    ({"k": "10"}, "from 1"),
    ({"extra": 1}, "unknown key"),
])
def test_a_malformed_sidecar_reference_is_refused(ref: dict[str, object], message: str) -> None:
    base = {"sidecar": "x.evidence.json", "sha256": "sha256:" + "0" * 64, "ids": 0, "k": 1}
    with pytest.raises(InputError, match=message):
        EvidenceSidecar.from_dict({**base, **ref})


# -- comparison documents ------------------------------------------------------------------

def test_comparisons_write_evidence_only_when_present_and_old_ones_still_load() -> None:
    runs = {s: _run(s) for s in SYSTEMS[:2]}
    result = compare(_qrels(), runs, "nDCG@10", stats=StatSettings(resamples=200))
    plain = result.to_dict()
    assert "evidence" not in plain  # as every comparison written before evidence existed
    assert load_comparison(plain) and len(rows_from_document(plain)) == 1
    with_ev = dataclasses.replace(result, evidence=collect_evidence(_qrels(), runs)).to_dict()
    assert list(with_ev)[-1] == "evidence" and with_ev["kind"] == "rankproof.comparison"
    assert set(with_ev["evidence"]["top"]) == {result.rows[0].baseline, result.rows[0].candidate}
    assert rows_from_document(with_ev) == rows_from_document(plain)
    assert load_evidence(with_ev, Path(".")) == collect_evidence(_qrels(), runs)


# -- query text ----------------------------------------------------------------------------

def test_read_queries_reads_trec_topics_and_json_lines(tmp_path: Path) -> None:
    topics = read_queries(TOPICS)
    assert len(topics) == 43 and topics["156493"] == "do goldfish grow"
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"query_id": "a", "query": "first?", "category": "normal"}\n\n'
                     '{"qid": 7, "text": "second"}\n{"_id": "c", "text": "third"}\n')
    assert read_queries(jsonl) == {"a": "first?", "7": "second", "c": "third"}


@pytest.mark.parametrize(("content", "message", "line"), [
    ("1\tone\n2 two\n", "no tab", 2),
    ("1\tone\n1\tagain\n", r"given twice \(first on line 1\)", 2),
    ("1\t  \n", "has no text", 1),
    ("\tone\n", "empty query id", 1),
    ('{"query_id": "a"}\n', "no query text", 1),
    ('{"query_id": "a", "qid": "b", "query": "x"}\n', "two query id keys", 1),
    ('{"query_id": "a", "query": "x"}\n{"query_id": ["b"], "query": "y"}\n', "must be a string",
     2),
])
def test_read_queries_names_the_file_and_line(tmp_path: Path, content: str, message: str,
                                              line: int) -> None:
    path = tmp_path / "queries.txt"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as err:
        read_queries(path)
    assert err.value.path == str(path) and err.value.line == line
