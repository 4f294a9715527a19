"""A corpus by id: ``rankproof eval --irds ID`` reads an ir_datasets dataset's documents,
queries and qrels from its local cache only, as a classic collection.

The dataset under test is Vaswani (the shared ``../shared/data/vaswani`` files) registered
with ir_datasets from local files: its documents written as JSON Lines (ir_datasets'
``JsonlDocs``; the TREC file's texts span lines, which a TSV cannot hold), its queries as
TSV (``TsvQueries``) and its qrels file as it is (``TrecQrels``). ``eval --irds`` must give
the per-query BM25 numbers ``eval --collection vaswani`` gives. A download attempted
anywhere fails the test.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from typer.testing import CliRunner

from rankproof import InputError
from rankproof._manifest import input_entry
from rankproof.cli import app
from rankproof.corpus import load_collection
from rankproof.data import irds_documents, irds_files, max_irds_docs
from rankproof.harness import collection_inputs, irds_inputs

ir_datasets = pytest.importorskip("ir_datasets")  # the dev extra installs it (make test)
from ir_datasets.formats import JsonlDocs, TrecQrels, TsvQueries  # noqa: E402
from ir_datasets.util.download import Download, LocalDownload, RequestsDownload  # noqa: E402
from tests._irds import irds_home  # noqa: E402,F401  (autouse: offline, fresh cache)

runner = CliRunner()
_ids = itertools.count()


class TitledDoc(NamedTuple):
    doc_id: str
    title: str
    text: str


@pytest.fixture(scope="module")
def vaswani_files(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Vaswani's documents as JSONL and queries as TSV, written from rankproof's own reader;
    its qrels file as it is."""
    collection = load_collection("vaswani", shared_data)
    out = tmp_path_factory.mktemp("vaswani-irds")
    docs = out / "docs.jsonl"
    docs.write_text("".join(json.dumps({"doc_id": d.id, "text": d.text}) + "\n"
                            for d in collection.documents), encoding="utf-8")
    queries = out / "queries.tsv"
    queries.write_text("".join(f"{q}\t{t}\n" for q, t in collection.queries), encoding="utf-8")
    return {"docs": docs, "queries": queries, "qrels": shared_data / "vaswani" / "qrels"}


def _register(docs: Any, queries: Any, qrels: Any, name: str = "vaswani") -> str:
    dataset_id = f"rankproof-test/{name}-{next(_ids)}"
    ir_datasets.registry.register(dataset_id, ir_datasets.Dataset(
        docs, TsvQueries(queries), TrecQrels(qrels, {1: "relevant"})))
    return dataset_id


def _vaswani(files: dict[str, Path]) -> str:
    return _register(JsonlDocs(LocalDownload(files["docs"])), LocalDownload(files["queries"]),
                     LocalDownload(files["qrels"]))


def _eval(tmp_path: Path, *source: str) -> dict[str, Any]:
    out = tmp_path / f"report-{next(_ids)}.json"
    result = runner.invoke(app, ["eval", *source, "--embedder", "hashing", "--stages", "bm25",
                                 "--resamples", "200", "--evidence-depth", "0", "--quiet",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def test_eval_by_id_equals_eval_of_the_collection(vaswani_files: dict[str, Path],
                                                  shared_data: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    dataset_id = _vaswani(vaswani_files)
    by_id = _eval(tmp_path, "--irds", dataset_id)
    by_collection = _eval(tmp_path, "--collection", "vaswani", "--data-root", str(shared_data))
    id_bm25, coll_bm25 = by_id["stages"][0], by_collection["stages"][0]
    assert id_bm25["name"] == coll_bm25["name"] == "bm25"
    assert len(id_bm25["per_query"]) == 93
    assert id_bm25["per_query"] == coll_bm25["per_query"]  # every query, every measure
    assert id_bm25["means"] == coll_bm25["means"]
    assert by_id["config"]["granularity"] == "document"
    assert by_id["inputs"]["documents"] == 11429 and by_id["inputs"]["name"] == f"irds:{dataset_id}"
    # The manifest names the id and digests the cached files it was read from.
    entry = by_id["provenance"]["inputs"]["irds"]
    assert entry["path"] == f"irds:{dataset_id}"
    assert entry["sha256"].startswith("sha256:")
    assert set(entry["files"]) == {str(p) for p in vaswani_files.values()}
    assert entry["bytes"] == sum(p.stat().st_size for p in vaswani_files.values())


def test_irds_inputs_match_the_collection_s(vaswani_files: dict[str, Path],
                                            shared_data: Path) -> None:
    dataset_id = _vaswani(vaswani_files)
    by_id = irds_inputs(dataset_id)
    coll = collection_inputs("vaswani", shared_data, "document", 800, 100)
    assert by_id.corpus.digest == coll.corpus.digest  # same ids, texts and chunking
    assert by_id.queries == coll.queries
    assert by_id.qrels.to_dict() == coll.qrels.to_dict()
    assert by_id.granularity == "document" and by_id.no_answer == ()
    assert by_id.source == by_id.name == f"irds:{dataset_id}"
    # irds:ID names the same dataset.
    assert irds_inputs(f"irds:{dataset_id}").corpus.digest == by_id.corpus.digest


def test_chunk_granularity_carries_the_caveat(vaswani_files: dict[str, Path]) -> None:
    from rankproof.harness._inputs import IRDS_CHUNK_CAVEAT

    inputs = irds_inputs(_vaswani(vaswani_files), "chunk", 200, 20)
    assert inputs.notes[0] == IRDS_CHUNK_CAVEAT
    chunk_doc = inputs.chunk_doc
    assert all(chunk_doc[c] in inputs.corpus for c in inputs.qrels.docids.to_pylist())
    assert len(inputs.qrels) > 2083  # every chunk of a relevant document is relevant
    assert "chunk" not in " ".join(irds_inputs(_vaswani(vaswani_files)).notes)


def test_titles_are_joined_to_the_text(tmp_path: Path, vaswani_files: dict[str, Path]) -> None:
    docs = tmp_path / "titled.jsonl"
    docs.write_text(json.dumps({"doc_id": "a", "title": "Water", "text": "is wet"}) + "\n"
                    + json.dumps({"doc_id": "b", "title": " ", "text": "no title"}) + "\n",
                    encoding="utf-8")
    name = _register(JsonlDocs(LocalDownload(docs), doc_cls=TitledDoc),
                     LocalDownload(vaswani_files["queries"]), LocalDownload(vaswani_files["qrels"]),
                     name="titled")
    assert irds_documents(f"irds:{name}") == [("a", "Water\n\nis wet"), ("b", "no title")]


def test_a_corpus_over_the_bound_is_refused(vaswani_files: dict[str, Path],
                                            monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    dataset_id = _vaswani(vaswani_files)
    assert max_irds_docs() == 2_000_000
    with pytest.raises(InputError) as info:
        irds_documents(f"irds:{dataset_id}", max_docs=100)
    assert f"the corpus of {dataset_id!r} holds more than that documents" in info.value.reason
    assert "RANKPROOF_MAX_IRDS_DOCS" in info.value.reason and "(100;" in info.value.reason
    assert info.value.path == f"irds:{dataset_id}" and info.value.field == "docs"
    monkeypatch.setenv("RANKPROOF_MAX_IRDS_DOCS", "11428")
    assert max_irds_docs() == 11428
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["eval", "--irds", dataset_id, "--embedder", "hashing",
                                 "--stages", "bm25"])
    assert result.exit_code == 2
    assert "RANKPROOF_MAX_IRDS_DOCS" in result.stderr
    assert not (tmp_path / "evals").exists()
    monkeypatch.setenv("RANKPROOF_MAX_IRDS_DOCS", "not a number")  # ignored, not switched off
    assert max_irds_docs() == 2_000_000


def test_an_uncached_corpus_is_refused_before_anything_is_read(
        vaswani_files: dict[str, Path], irds_home: Path, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Queries and qrels are cached, the documents are not: refused naming the id and the
    file, nothing downloaded, no report written."""
    cached_at = irds_home / "rankproof-test" / "docs.jsonl"
    remote = Download([RequestsDownload("https://example.invalid/docs.jsonl")],
                      cache_path=str(cached_at))
    dataset_id = _register(JsonlDocs(remote), LocalDownload(vaswani_files["queries"]),
                           LocalDownload(vaswani_files["qrels"]), name="uncached")
    with pytest.raises(InputError) as info:
        irds_files(f"irds:{dataset_id}")
    assert f"the docs of {dataset_id!r} are not in the local ir_datasets cache" in \
        info.value.reason
    assert "https://example.invalid/docs.jsonl" in info.value.reason
    assert info.value.field == "docs"
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["eval", "--irds", dataset_id, "--embedder", "hashing",
                                 "--stages", "bm25"])
    assert result.exit_code == 2, result.output
    assert f"irds:{dataset_id}" in result.stderr
    assert "not in the local ir_datasets cache" in result.stderr
    assert not cached_at.exists() and not (tmp_path / "evals").exists()
    # Once the file is in the cache, the same id evaluates.
    cached_at.parent.mkdir(parents=True)
    cached_at.write_bytes(vaswani_files["docs"].read_bytes())
    assert len(irds_inputs(dataset_id).corpus) == 11429


def test_unknown_id_and_two_sources_are_refused(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                shared_data: Path) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["eval", "--irds", "rankproof-test/no-such-dataset"])
    assert result.exit_code == 2
    assert "unknown ir_datasets id 'rankproof-test/no-such-dataset'" in result.stderr
    result = runner.invoke(app, ["eval", "--irds", "x", "--collection", "vaswani",
                                 "--data-root", str(shared_data)])
    assert result.exit_code == 2
    assert "at most one of CORPUS_DIR, --collection, --beir, --irds" in result.stderr
    result = runner.invoke(app, ["eval", "--irds", "x", "--judgments", "j.jsonl"])
    assert result.exit_code == 2
    assert "--judgments goes with CORPUS_DIR; --irds reads the dataset's own qrels" in \
        " ".join(result.stderr.split())


def test_qrels_of_a_query_the_dataset_lacks_are_refused(tmp_path: Path,
                                                        vaswani_files: dict[str, Path]) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(vaswani_files["queries"].read_text().splitlines(True)[1:]))
    dataset_id = _register(JsonlDocs(LocalDownload(vaswani_files["docs"])),
                           LocalDownload(queries), LocalDownload(vaswani_files["qrels"]),
                           name="no-q1")
    with pytest.raises(InputError, match=r"judge 1 query the dataset's queries do not hold "
                                         r"\(first: '1'\)"):
        irds_inputs(dataset_id)


def test_judged_documents_missing_from_the_corpus_are_noted(
        tmp_path: Path, vaswani_files: dict[str, Path]) -> None:
    docs = tmp_path / "docs.jsonl"
    lines = vaswani_files["docs"].read_text(encoding="utf-8").splitlines(True)
    docs.write_text("".join(line for line in lines if json.loads(line)["doc_id"] != "1239"),
                    encoding="utf-8")
    dataset_id = _register(JsonlDocs(LocalDownload(docs)),
                           LocalDownload(vaswani_files["queries"]),
                           LocalDownload(vaswani_files["qrels"]), name="no-d1239")
    inputs = irds_inputs(dataset_id)
    assert len(inputs.corpus) == 11428
    assert any("1 judged document(s) are not in the corpus (e.g. '1239')" in n
               for n in inputs.notes)
    assert "1239" in inputs.qrels.docids.to_pylist()  # kept: trec_eval counts it


def test_manifest_entry_without_a_read_has_no_digest() -> None:
    entry = input_entry("irds:rankproof-test/never-read")
    assert entry == {"path": "irds:rankproof-test/never-read", "sha256": None, "bytes": None}


def test_manifest_verify_rehashes_the_cached_files(tmp_path: Path,
                                                   vaswani_files: dict[str, Path]) -> None:
    from rankproof._manifest import verify_entry

    docs = tmp_path / "docs.jsonl"
    docs.write_bytes(vaswani_files["docs"].read_bytes())
    name = _register(JsonlDocs(LocalDownload(docs)), LocalDownload(vaswani_files["queries"]),
                     LocalDownload(vaswani_files["qrels"]), name="verify")
    files = irds_files(f"irds:{name}")
    assert set(files) == {str(docs), str(vaswani_files["queries"]), str(vaswani_files["qrels"])}
    entry = input_entry(f"irds:{name}")
    assert entry["files"] == list(files) and entry["sha256"].startswith("sha256:")
    assert verify_entry("irds", entry)["status"] == "unchanged"
    docs.write_text(docs.read_text(encoding="utf-8").replace("compact", "compacts", 1),
                    encoding="utf-8")
    assert verify_entry("irds", entry)["status"] == "CHANGED"
    docs.unlink()
    assert verify_entry("irds", entry)["status"] == "missing"


def test_a_real_corpus_without_its_cache_is_refused(tmp_path: Path) -> None:
    """ir_datasets' own msmarco-passage/trec-dl-2019/judged, in a fresh process whose cache
    is empty and whose network is a dead proxy: refused naming the id and the documents'
    file, nothing fetched (ir_datasets itself writes only its cache-layout version marker
    when the documents' handler is looked up)."""
    import os
    import subprocess
    import sys

    home = tmp_path / "fresh-home"
    env = {**os.environ, "IR_DATASETS_HOME": str(home), "HTTPS_PROXY": "http://127.0.0.1:9",
           "HTTP_PROXY": "http://127.0.0.1:9"}
    dataset = "msmarco-passage/trec-dl-2019/judged"
    done = subprocess.run([sys.executable, "-m", "rankproof", "eval", "--irds", dataset,
                           "--embedder", "hashing", "--stages", "bm25", "--quiet"],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    text = " ".join(done.stderr.split())
    assert f"the docs of '{dataset}' are not in the local ir_datasets cache" in text
    assert "collectionandqueries.tar.gz" in text
    assert {p.name for p in home.rglob("*") if p.is_file()} <= {"irds_version.txt"}
    assert not (tmp_path / "evals").exists()
