"""Graded BEIR qrels keep their grades through `adapt_beir` and `rankproof eval`.

The real data: TREC DL 2019 passage qrels (graded 0-3, ../shared/data/trec_dl) over
the passages whose text the rank_llm BM25 top-100 carries
(../shared/data/rankllm_runs/BM25/retrieve_results_dl19.json), written as a BEIR
folder: 4,297 passages, 43 queries, every judgment of a passage in that set.
The graded nDCG@10 of the published BM25 run (trec_results_dl19.txt) is pinned
against pytrec_eval on the BEIR qrels file itself; flattening the grades, as the
adapter did before issue 10, gives a different number (pinned too).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import rankproof as rp
from rankproof._errors import InputError
from rankproof.cli import app
from rankproof.corpus import adapt_beir, graded_qrels, read_corpus, read_judgments
from rankproof.corpus._grades import query_grades
from rankproof.corpus._judgments import Judgments
from rankproof.data import Run, load_run
from rankproof.harness import EvalReport, beir_inputs
from rankproof.harness._inputs import CHUNK_CAVEAT

pytrec_eval = pytest.importorskip("pytrec_eval")

# Computed here (pytrec_eval 0.5, ndcg_cut.10, mean over the 43 judged queries):
GRADED_NDCG10 = 0.5455703128753565
FLATTENED_NDCG10 = 0.6644188385192081


@pytest.fixture(scope="module")
def dl19_beir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """DL19 passages + graded qrels as a BEIR folder (corpus.jsonl, queries.jsonl, qrels/)."""
    data = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    hits = json.loads((data / "rankllm_runs/BM25/retrieve_results_dl19.json").read_text())
    root = tmp_path_factory.mktemp("dl19") / "beir"
    (root / "qrels").mkdir(parents=True)
    docs: dict[str, str] = {}
    for query in hits:
        for hit in query["hits"]:
            docs.setdefault(hit["docid"], hit["content"])
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for doc_id, text in docs.items():
            fh.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
    with open(root / "queries.jsonl", "w", encoding="utf-8") as fh:
        for line in (data / "trec_dl/topics.dl19-passage.txt").read_text().splitlines():
            qid, text = line.split("\t")
            fh.write(json.dumps({"_id": qid, "text": text}) + "\n")
    with open(root / "qrels" / "test.tsv", "w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for line in (data / "trec_dl/qrels.dl19-passage.txt").read_text().splitlines():
            qid, _, doc_id, label = line.split()
            if doc_id in docs:
                fh.write(f"{qid}\t{doc_id}\t{label}\n")
    return root


def _beir_qrels(root: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in (root / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, doc_id, label = line.split("\t")
        out.setdefault(qid, {})[doc_id] = int(label)
    return out


def _bm25_run(shared_data: Path) -> dict[str, dict[str, float]]:
    return load_run(shared_data / "rankllm_runs/BM25/trec_results_dl19.txt").to_dict()


def test_adaptation_keeps_every_grade(dl19_beir: Path, tmp_path: Path) -> None:
    result = adapt_beir(dl19_beir, tmp_path / "out")
    assert result.graded and (result.documents, result.queries) == (4297, 43)
    corpus = read_corpus(result.docs_dir)
    judgments = read_judgments(result.judgments_path, corpus)
    expected = {q: {d + ".txt": r for d, r in docs.items() if r > 0}
                for q, docs in _beir_qrels(dl19_beir).items()}
    assert graded_qrels(judgments, corpus, "document").to_dict() == expected
    labels = graded_qrels(judgments, corpus, "document").rels
    assert sorted(set(labels.tolist())) == [1, 2, 3]
    # The quote-anchored view stays binary: grades are an extra the graded view reads.
    assert set(judgments.to_qrels(corpus, "document").rels.tolist()) == {1}


def test_graded_ndcg_agrees_with_pytrec_eval(dl19_beir: Path, tmp_path: Path,
                                             shared_data: Path) -> None:
    adapt_beir(dl19_beir, tmp_path / "out")
    corpus = read_corpus(tmp_path / "out" / "docs")
    judgments = read_judgments(tmp_path / "out" / "judgments.jsonl", corpus)
    run = _bm25_run(shared_data)
    as_files = Run.from_dict({q: {d + ".txt": s for d, s in docs.items()}
                              for q, docs in run.items()})
    graded = rp.evaluate(graded_qrels(judgments, corpus, "document"), as_files, "nDCG@10")
    flat = rp.evaluate(judgments.to_qrels(corpus, "document"), as_files, "nDCG@10")

    beir_qrels = _beir_qrels(dl19_beir)
    reference = pytrec_eval.RelevanceEvaluator(beir_qrels, {"ndcg_cut.10"}).evaluate(run)
    for qid, value in zip(graded.qids, graded.column("nDCG@10").tolist(), strict=True):
        assert value == pytest.approx(reference[qid]["ndcg_cut_10"], abs=1e-12), qid
    assert graded.mean("nDCG@10") == pytest.approx(GRADED_NDCG10, abs=1e-12)
    binary = {q: {d: int(r > 0) for d, r in docs.items()} for q, docs in beir_qrels.items()}
    flat_ref = pytrec_eval.RelevanceEvaluator(binary, {"ndcg_cut.10"}).evaluate(run)
    assert flat.mean("nDCG@10") == pytest.approx(
        float(np.mean([flat_ref[q]["ndcg_cut_10"] for q in binary])), abs=1e-12)
    assert flat.mean("nDCG@10") == pytest.approx(FLATTENED_NDCG10, abs=1e-12)


def test_beir_inputs_are_graded_and_by_document_by_default(dl19_beir: Path) -> None:
    inputs = beir_inputs(dl19_beir, "test")
    assert inputs.granularity == "document"
    assert inputs.notes == ()
    assert inputs.qrels.to_dict()["1112341"] == {
        d + ".txt": r for d, r in _beir_qrels(dl19_beir)["1112341"].items() if r > 0}
    chunked = beir_inputs(dl19_beir, "test", "chunk", chunk_size=200, overlap=20)
    assert chunked.notes == (CHUNK_CAVEAT,)
    assert "not comparable to published BEIR numbers" in CHUNK_CAVEAT
    # every chunk of a graded document takes the document's grade
    doc_of = chunked.chunk_doc
    by_doc = inputs.qrels.to_dict()
    for qid, chunks in chunked.qrels.to_dict().items():
        for chunk, rel in chunks.items():
            assert rel == by_doc[qid][doc_of[chunk]]


def test_eval_on_an_adapted_folder_is_graded_and_finds_its_judgments(
    dl19_beir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`rankproof adapt beir SRC OUT` then `rankproof eval OUT`: no --judgments, by document,
    graded; and the same numbers as `rankproof eval --beir SRC`."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    out = tmp_path / "adapted"
    adapted = runner.invoke(app, ["adapt", "beir", str(dl19_beir), str(out)])
    assert adapted.exit_code == 0, adapted.output
    assert "(test, graded)" in adapted.output and f"rankproof eval {out}" in adapted.output
    reports = {}
    for key, args in (("folder", [str(out)]), ("beir", ["--beir", str(dl19_beir)]),
                      ("chunk", [str(out), "--granularity", "chunk"])):
        result = runner.invoke(app, ["eval", *args, "--stages", "bm25", "--quiet", "-m",
                                     "nDCG@10", "-o", str(tmp_path / f"{key}.json")])
        assert result.exit_code == 0, result.output
        reports[key] = EvalReport.model_validate_json((tmp_path / f"{key}.json").read_text())
        if key == "chunk":
            assert "not comparable to published BEIR numbers" in result.output
        else:
            assert "not comparable" not in result.output
    folder, beir, chunk = reports["folder"], reports["beir"], reports["chunk"]
    assert folder.inputs.granularity == beir.inputs.granularity == "document"
    assert folder.inputs.name == "adapted"
    assert folder.stages[0].means == beir.stages[0].means
    assert CHUNK_CAVEAT in chunk.caveats and CHUNK_CAVEAT not in folder.caveats
    assert chunk.inputs.granularity == "chunk"
    # graded: the flattened qrels would score the same stage higher on this data
    assert 0.45 < folder.stages[0].means["nDCG@10"] < 0.6


def test_grades_are_validated(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("alpha text", encoding="utf-8")
    (tmp_path / "docs" / "b.txt").write_text("beta text", encoding="utf-8")
    corpus = read_corpus(tmp_path / "docs")

    def judged(grades: object) -> Judgments:
        return Judgments.from_rows([{
            "query_id": "q", "query": "alpha?", "category": "normal",
            "gold": [{"doc": "a.txt", "quote": "alpha text"}], "meta": {"grades": grades},
        }], corpus, source="j.jsonl")

    assert graded_qrels(judged({"a.txt": 3}), corpus, "document").to_dict() == {
        "q": {"a.txt": 3}}
    assert query_grades(judged({"a.txt": 2})) == {"q": {"a.txt": 2}}
    for grades, message in (([1], "meta.grades must be an object"),
                            ({"b.txt": 2}, "names 'b.txt', which is not one of the query's "
                                           "gold documents"),
                            ({"a.txt": 0}, "must be a positive integer, found 0"),
                            ({"a.txt": True}, "must be a positive integer, found True"),
                            ({"a.txt": 1.5}, "must be a positive integer, found 1.5")):
        with pytest.raises(InputError, match=message) as info:
            graded_qrels(judged(grades), corpus)
        assert info.value.path == "j.jsonl" and info.value.field == "meta.grades"
