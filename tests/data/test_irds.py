"""Datasets by id: ``irds:ID`` reads qrels and topics through ir_datasets, from its cache only.

Each test registers a small dataset from the shared TREC DL 2019 files (ir_datasets'
``TrecQrels`` and ``TsvQueries`` over a ``LocalDownload``), so nothing here needs the
network; a dataset whose files are not cached is refused before ir_datasets could fetch
anything (its download entry points are spied on: a call fails the test).
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rankproof import InputError
from rankproof.cli import app
from rankproof.comparison import read_queries
from rankproof.data import irds_queries, is_irds, load_qrels

ir_datasets = pytest.importorskip("ir_datasets")  # the dev extra installs it (make test)
from ir_datasets.formats import TrecQrels, TsvQueries  # noqa: E402
from ir_datasets.util import Cache, GzipExtract  # noqa: E402
from ir_datasets.util.download import Download, LocalDownload, RequestsDownload  # noqa: E402
from tests._irds import irds_home  # noqa: E402,F401  (autouse: offline, fresh cache)

runner = CliRunner()
_ids = itertools.count()
QRELS_DEFS = {0: "not relevant", 1: "related", 2: "highly relevant", 3: "perfectly relevant"}


@pytest.fixture
def dl19(shared_data: Path) -> dict[str, Path]:
    base = shared_data / "trec_dl"
    return {"qrels": base / "qrels.dl19-passage.txt", "topics": base / "topics.dl19-passage.txt",
            "run": shared_data / "rankllm_runs" / "BM25" / "trec_results_dl19.txt"}


def _register(qrels: Any, queries: Any) -> str:
    name = f"rankproof-test/dl19-{next(_ids)}"
    ir_datasets.registry.register(
        name, ir_datasets.Dataset(TrecQrels(qrels, QRELS_DEFS), TsvQueries(queries)))
    return name


def _local(dl19: dict[str, Path]) -> str:
    return _register(LocalDownload(dl19["qrels"]), LocalDownload(dl19["topics"]))


def test_is_irds() -> None:
    assert is_irds("irds:msmarco-passage/trec-dl-2019/judged")
    assert is_irds(Path("irds:msmarco-passage/trec-dl-2019/judged"))
    assert not is_irds("qrels.txt") and not is_irds({"q": {"d": 1}})


def test_qrels_equal_the_file_s(dl19: dict[str, Path]) -> None:
    name = _local(dl19)
    from_id = load_qrels(f"irds:{name}")
    from_file = load_qrels(dl19["qrels"])
    assert from_id.to_dict() == from_file.to_dict()
    assert from_id.digest == from_file.digest


def test_measure_by_id_equals_measure_by_file(dl19: dict[str, Path]) -> None:
    name = _local(dl19)
    args = ["-m", "official", "-f", "json"]
    by_id = runner.invoke(app, ["measure", f"irds:{name}", str(dl19["run"]), *args])
    by_file = runner.invoke(app, ["measure", str(dl19["qrels"]), str(dl19["run"]), *args])
    assert by_id.exit_code == 0, by_id.output
    assert by_file.exit_code == 0, by_file.output
    id_doc, file_doc = json.loads(by_id.stdout), json.loads(by_file.stdout)
    assert id_doc["runs"] == file_doc["runs"]  # every mean and per-query value, exactly
    text_id = runner.invoke(app, ["measure", f"irds:{name}", str(dl19["run"]), "-m", "official"])
    text_file = runner.invoke(app, ["measure", str(dl19["qrels"]), str(dl19["run"]), "-m",
                                    "official"])
    assert text_id.stdout == text_file.stdout


def test_queries_equal_the_topics_file_s(dl19: dict[str, Path]) -> None:
    name = _local(dl19)
    assert read_queries(f"irds:{name}") == read_queries(dl19["topics"])
    assert read_queries(Path(f"irds:{name}")) == read_queries(dl19["topics"])
    pairs = irds_queries(f"irds:{name}")
    assert pairs[0] == ("156493", "do goldfish grow")


def test_compare_reads_qrels_and_queries_by_id(dl19: dict[str, Path], shared_data: Path,
                                              tmp_path: Path) -> None:
    name = _local(dl19)
    other = shared_data / "rankllm_runs" / "BM25_RM3" / "trec_results_dl19.txt"
    docs = []
    for label, qrels, topics in (("id", f"irds:{name}", f"irds:{name}"),
                                 ("file", str(dl19["qrels"]), str(dl19["topics"]))):
        out = tmp_path / f"{label}.json"
        result = runner.invoke(app, ["compare", qrels, str(dl19["run"]), str(other),
                                     "-m", "nDCG@10", "--queries", topics, "-o", str(out)])
        assert result.exit_code == 0, result.output
        doc = json.loads(out.read_text())
        doc.pop("provenance")
        docs.append(doc)
    assert docs[0] == docs[1]  # the same rows, and the same query texts in the evidence
    assert docs[0]["evidence"]["queries"]["156493"] == "do goldfish grow"


def test_unknown_id_is_refused() -> None:
    with pytest.raises(InputError) as info:
        load_qrels("irds:rankproof-test/no-such-dataset")
    assert "unknown ir_datasets id 'rankproof-test/no-such-dataset'" in info.value.reason
    assert info.value.path == "irds:rankproof-test/no-such-dataset"
    with pytest.raises(InputError, match="'irds:' names no dataset"):
        load_qrels("irds:")
    result = runner.invoke(app, ["measure", "irds:rankproof-test/no-such-dataset",
                                 "/dev/null"])
    assert result.exit_code == 2
    assert "unknown ir_datasets id" in result.stderr


def test_uncached_dataset_is_refused_without_downloading(dl19: dict[str, Path],
                                                          irds_home: Path) -> None:  # noqa: F811
    cached_at = irds_home / "rankproof-test" / "qrels.txt"
    remote = Download([RequestsDownload("https://example.invalid/qrels.txt")],
                      cache_path=str(cached_at))
    name = _register(remote, LocalDownload(dl19["topics"]))
    with pytest.raises(InputError) as info:
        load_qrels(f"irds:{name}")
    message = info.value.reason
    assert f"the qrels of {name!r} are not in the local ir_datasets cache" in message
    assert str(cached_at) in message and "https://example.invalid/qrels.txt" in message
    assert f"ir_datasets export {name} qrels" in message
    assert info.value.field == "qrels"
    assert not cached_at.exists()
    # Once the file is in the cache, the same id reads it.
    cached_at.parent.mkdir(parents=True)
    shutil.copy(dl19["qrels"], cached_at)
    assert load_qrels(f"irds:{name}").to_dict() == load_qrels(dl19["qrels"]).to_dict()


def test_uncached_cache_of_an_extraction_is_refused(dl19: dict[str, Path],
                                                    irds_home: Path) -> None:  # noqa: F811
    target = irds_home / "rankproof-test" / "queries.tsv"
    queries = Cache(GzipExtract(Download([RequestsDownload("https://example.invalid/q.gz")])),
                    target)
    name = _register(LocalDownload(dl19["qrels"]), queries)
    with pytest.raises(InputError) as info:
        read_queries(f"irds:{name}")
    assert str(target) in info.value.reason
    assert "https://example.invalid/q.gz" in info.value.reason
    assert not target.exists()
    result = runner.invoke(app, ["compare", str(dl19["qrels"]), str(dl19["run"]),
                                 str(dl19["run"]), "--queries", f"irds:{name}"])
    assert result.exit_code == 2
    assert "not in the local ir_datasets cache" in result.stderr
    # The qrels of the same dataset are cached: they read.
    assert load_qrels(f"irds:{name}").to_dict() == load_qrels(dl19["qrels"]).to_dict()


def test_what_the_walk_cannot_see_is_refused_while_reading(dl19: dict[str, Path]) -> None:
    """A filtered subset whose ids come from a function: the read guard refuses the fetch."""
    from ir_datasets.datasets.base import FilteredQueries
    from ir_datasets.util import Lazy

    remote = _register(Download([RequestsDownload("https://example.invalid/qrels.txt")]),
                       LocalDownload(dl19["topics"]))
    judged = Lazy(lambda: {q.query_id for q in ir_datasets.load(remote).qrels_iter()})
    name = f"rankproof-test/judged-{next(_ids)}"
    ir_datasets.registry.register(name, ir_datasets.Dataset(
        FilteredQueries(TsvQueries(LocalDownload(dl19["topics"])), judged)))
    with pytest.raises(InputError, match="not in the local ir_datasets cache"):
        read_queries(f"irds:{name}")
    # The guard is lifted afterwards: ir_datasets' own classes are as they were.
    assert "refuse" not in Download.path.__name__


def test_a_dataset_without_the_entity_is_refused(dl19: dict[str, Path]) -> None:
    name = f"rankproof-test/queries-only-{next(_ids)}"
    ir_datasets.registry.register(name, ir_datasets.Dataset(
        TsvQueries(LocalDownload(dl19["topics"]))))
    with pytest.raises(InputError, match="has no qrels"):
        load_qrels(f"irds:{name}")


def test_format_does_not_apply(dl19: dict[str, Path]) -> None:
    with pytest.raises(InputError, match="does not apply"):
        load_qrels(f"irds:{_local(dl19)}", format="json")


def test_a_real_id_without_its_cache_is_refused(tmp_path: Path, dl19: dict[str, Path]) -> None:
    """ir_datasets' own msmarco-passage/trec-dl-2019/judged, in a fresh process whose cache is
    empty and whose network is a dead proxy: refused naming the id, nothing fetched."""
    import os
    import subprocess
    import sys

    home = tmp_path / "fresh-home"
    env = {**os.environ, "IR_DATASETS_HOME": str(home), "HTTPS_PROXY": "http://127.0.0.1:9",
           "HTTP_PROXY": "http://127.0.0.1:9"}
    dataset = "msmarco-passage/trec-dl-2019/judged"
    done = subprocess.run([sys.executable, "-m", "rankproof", "measure", f"irds:{dataset}",
                           str(dl19["run"])], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2, done.stderr
    assert f"the qrels of '{dataset}' are not in the local ir_datasets cache" in done.stderr
    assert "https://trec.nist.gov/data/deep/2019qrels-pass.txt" in done.stderr
    assert not any(p.is_file() for p in home.rglob("*"))  # no file fetched, none begun
