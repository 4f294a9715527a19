"""Experiment files name ir_datasets datasets by id: ``inputs: {irds: ID}`` (documents,
queries and qrels), and ``qrels: irds:ID`` / ``topics: irds:ID`` (never made relative to
the file). Every dataset is registered from local files in a fresh ``IR_DATASETS_HOME``; a
download attempted anywhere fails the test.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from tests.pipeline._helpers import DL, RUNS, invoke, statuses, write

from rankproof.corpus import load_collection
from rankproof.harness import EvalReport
from rankproof.pipeline import load_experiment

ir_datasets = pytest.importorskip("ir_datasets")  # the dev extra installs it (make test)
from ir_datasets.formats import JsonlDocs, TrecQrels, TsvQueries  # noqa: E402
from ir_datasets.util.download import Download, LocalDownload, RequestsDownload  # noqa: E402
from tests._irds import irds_home  # noqa: E402,F401  (autouse: offline, fresh cache)

_ids = itertools.count()
VASWANI = DL.parent / "vaswani"


@pytest.fixture(scope="module")
def vaswani_id(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Vaswani registered from local files: documents as JSONL, queries as TSV, the qrels
    file as it is."""
    collection = load_collection("vaswani", VASWANI.parent)
    out = tmp_path_factory.mktemp("vaswani-irds")
    docs = write(out / "docs.jsonl", "".join(json.dumps({"doc_id": d.id, "text": d.text}) + "\n"
                                             for d in collection.documents))
    queries = write(out / "queries.tsv", "".join(f"{q}\t{t}\n" for q, t in collection.queries))
    name = f"rankproof-test/pipeline-vaswani-{next(_ids)}"
    ir_datasets.registry.register(name, ir_datasets.Dataset(
        JsonlDocs(LocalDownload(docs)), TsvQueries(LocalDownload(queries)),
        TrecQrels(LocalDownload(VASWANI / "qrels"), {1: "relevant"})))
    return name


def _dl19_id() -> str:
    name = f"rankproof-test/pipeline-dl19-{next(_ids)}"
    ir_datasets.registry.register(name, ir_datasets.Dataset(
        TrecQrels(LocalDownload(DL / "qrels.dl19-passage.txt"),
                  {0: "no", 1: "related", 2: "highly", 3: "perfectly"}),
        TsvQueries(LocalDownload(DL / "topics.dl19-passage.txt"))))
    return name


def test_an_irds_input_runs_as_the_collection_does(tmp_path: Path, vaswani_id: str) -> None:
    stage = ("{id: %s, kind: eval, embedder: hashing, stages: [bm25], resamples: 200, "
             "measures: [nDCG@10, AP]}")
    exp = write(tmp_path / "exp.yaml", f"""\
output: out
inputs: {{irds: {vaswani_id}}}
stages:
  - {stage % 'by_id'}
  - {{id: bm25, kind: retrieve, method: bm25}}
  - {{id: scores, kind: measure, runs: [bm25], measures: [nDCG@10, AP]}}
""")
    coll = write(tmp_path / "coll.yaml", f"""\
output: out-coll
inputs: {{collection: {{name: vaswani, root: {VASWANI.parent}}}}}
stages:
  - {stage % 'by_collection'}
""")
    for f in (exp, coll):
        r = invoke("run", f)
        assert r.exit_code == 0, r.output
    by_id = EvalReport.model_validate_json((tmp_path / "out" / "by_id" / "report.json")
                                           .read_text())
    by_coll = EvalReport.model_validate_json((tmp_path / "out-coll" / "by_collection"
                                              / "report.json").read_text())
    assert by_id.config["granularity"] == "document"  # the inputs' default, as for a collection
    assert by_id.stage("bm25").per_query == by_coll.stage("bm25").per_query
    assert len(by_id.stage("bm25").per_query) == 93
    entry = by_id.provenance.inputs["irds"]
    assert entry["path"] == f"irds:{vaswani_id}" and entry["sha256"].startswith("sha256:")
    measured = json.loads((tmp_path / "out" / "scores" / "measure.json").read_text())
    assert measured["runs"][0]["means"]["AP"] == pytest.approx(
        by_id.stage("bm25").means["AP"], abs=1e-12)
    # A rerun finds every stage cached: the key holds the cached files' digest.
    again = invoke("run", exp)
    assert again.exit_code == 0, again.output
    assert set(statuses(tmp_path / "out").values()) == {"cached"}


def test_qrels_and_topics_by_id_are_not_paths(tmp_path: Path) -> None:
    name = _dl19_id()
    run = RUNS / "BM25" / "trec_results_dl19.txt"
    body = """\
output: {out}
inputs:
  qrels: {qrels}
  topics: {topics}
stages:
  - {{id: bm25, kind: run_file, path: {run}}}
  - {{id: scores, kind: measure, runs: [bm25], measures: [nDCG@10, AP], rel_level: 2}}
"""
    by_id = write(tmp_path / "sub" / "by-id.yaml", body.format(
        out="out-id", qrels=f"irds:{name}", topics=f"irds:{name}", run=run))
    exp = load_experiment(by_id)
    assert str(exp.resolve(f"irds:{name}")) == f"irds:{name}"  # not under sub/
    by_file = write(tmp_path / "sub" / "by-file.yaml", body.format(
        out="out-file", qrels=DL / "qrels.dl19-passage.txt",
        topics=DL / "topics.dl19-passage.txt", run=run))
    docs = []
    for f, out in ((by_id, "out-id"), (by_file, "out-file")):
        r = invoke("run", f)
        assert r.exit_code == 0, r.output
        docs.append(json.loads((tmp_path / "sub" / out / "scores" / "measure.json").read_text()))
    assert docs[0]["runs"] == docs[1]["runs"]
    assert docs[0]["provenance"]["inputs"]["qrels"][0]["path"] == f"irds:{name}"


def test_an_uncached_dataset_is_refused_before_anything_runs(tmp_path: Path,
                                                             irds_home: Path) -> None:  # noqa: F811
    cached_at = irds_home / "rankproof-test" / "docs.jsonl"
    name = f"rankproof-test/pipeline-uncached-{next(_ids)}"
    ir_datasets.registry.register(name, ir_datasets.Dataset(
        JsonlDocs(Download([RequestsDownload("https://example.invalid/docs.jsonl")],
                           cache_path=str(cached_at))),
        TsvQueries(LocalDownload(DL / "topics.dl19-passage.txt")),
        TrecQrels(LocalDownload(DL / "qrels.dl19-passage.txt"), {1: "relevant"})))
    exp = write(tmp_path / "exp.yaml", f"""\
output: out
inputs:
  irds: irds:{name}
stages:
  - {{id: bm25, kind: retrieve, method: bm25}}
""")
    r = invoke("run", exp)
    assert r.exit_code == 2, r.output
    text = " ".join(r.stderr.split())
    assert f"{exp}, line 3, field 'inputs.irds'" in text
    assert f"the docs of '{name}' are not in the local ir_datasets cache" in text
    assert "https://example.invalid/docs.jsonl" in text
    assert not (tmp_path / "out").exists() and not cached_at.exists()


def test_an_irds_input_is_one_source(tmp_path: Path) -> None:
    exp = write(tmp_path / "exp.yaml", f"""\
output: out
inputs: {{irds: some/id, collection: {{name: vaswani, root: {VASWANI.parent}}}}}
stages:
  - {{id: bm25, kind: retrieve, method: bm25}}
""")
    r = invoke("run", exp)
    assert r.exit_code == 2
    assert "give one source of judgments, got collection, irds" in " ".join(r.stderr.split())
