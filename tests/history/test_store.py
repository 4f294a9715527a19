"""The store on SQLite and PostgreSQL (the ``store_url`` fixture): content-addressed,
append-only adds; nothing lost or duplicated by 8 concurrent processes; a killed add leaves
the store consistent; the schema version checked; hostile text stored verbatim."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from rankproof._errors import InputError
from rankproof.cli import app
from rankproof.history import SCHEMA_VERSION, open_store
from tests.history._planted import Planted

ROOT = Path(__file__).resolve().parents[2]

_ADDER = """
import json, sys
from rankproof.history import open_store
url, files = sys.argv[1], sys.argv[2:]
with open_store(url) as store:
    for f in files:
        rid, new = store.add(json.load(open(f)), f)
        print(rid, new, flush=True)
"""


def _counts(url: str) -> tuple[int, int, int]:
    with open_store(url) as store, store.engine.connect() as conn:
        return tuple(int(conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one())
                     for t in ("results", "per_query", "qid_lists"))  # type: ignore[return-value]


def test_adding_twice_is_a_no_op(fresh_url: str, planted_store: tuple[str, Planted]) -> None:
    files = planted_store[1].files
    with open_store(fresh_url) as store:
        first = [store.add(json.loads(f.read_text()), str(f)) for f in files[:3]]
        again = [store.add(json.loads(f.read_text()), str(f)) for f in files[:3]]
        doc = store.document(store.get(first[0][0]))
    assert all(new for _, new in first) and not any(new for _, new in again)
    assert [i for i, _ in first] == [i for i, _ in again]
    assert doc == json.loads(files[0].read_text())  # kept exactly as added
    assert _counts(fresh_url) == (3, 6, 1)  # 2 measures per result; one shared qid list


@pytest.mark.slow  # eight interpreters importing rankproof: about a minute on two cores
def test_eight_processes_lose_nothing_and_duplicate_nothing(
        fresh_url: str, planted_store: tuple[str, Planted]) -> None:
    files = [str(f) for f in planted_store[1].files]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    procs = [subprocess.Popen([sys.executable, "-c", _ADDER, fresh_url,
                               *[files[(k * 3 + j) % 20] for j in range(12)]],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for k in range(8)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    added = [line.split() for out, _ in outs for line in out.splitlines()]
    assert len(added) == 96
    new = [rid for rid, flag in added if flag == "True"]
    assert len(new) == len(set(new)) == 20  # every document stored exactly once
    assert _counts(fresh_url) == (20, 40, 1)


def test_a_process_killed_mid_add_leaves_the_store_consistent(
        fresh_url: str, planted_store: tuple[str, Planted]) -> None:
    files = [str(f) for f in planted_store[1].files]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-c", _ADDER, fresh_url, *files],
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    proc.stdout.readline()  # one result is in; the kill lands during a later one
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    results, arrays, _ = _counts(fresh_url)
    assert 1 <= results <= 20 and arrays == 2 * results  # whole results only
    with open_store(fresh_url) as store:
        new = sum(store.add(json.loads(Path(f).read_text()), f)[1] for f in files)
    assert new == 20 - results and _counts(fresh_url)[:2] == (20, 40)


def test_a_newer_schema_is_refused_naming_both_versions(store_url: str) -> None:
    with open_store(store_url) as store, store.engine.begin() as conn:
        conn.execute(text("UPDATE rankproof_meta SET value = '99' WHERE key = 'schema_version'"))
    with pytest.raises(InputError, match=rf"schema version 99.*up to {SCHEMA_VERSION}"):
        open_store(store_url)
    got = CliRunner().invoke(app, ["history", "list", "--history", store_url])
    assert got.exit_code == 2 and "schema version 99" in got.output


@pytest.mark.parametrize("content", [b"this is not a database\n" * 200,
                                     b"SQLite format 3\x00" + b"\x07" * 4000])
def test_a_corrupt_file_is_exit_2_naming_it(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "corrupt.db"
    bad.write_bytes(content)
    got = CliRunner().invoke(app, ["history", "list", "--history", str(bad)])
    assert got.exit_code == 2, got.output
    assert str(bad) in got.output.replace("\n", "") and "history database" in got.output


def test_a_foreign_database_is_refused(tmp_path: Path) -> None:
    import sqlite3

    foreign = tmp_path / "app.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE users (id INTEGER)")
    with pytest.raises(InputError, match="not a rankproof history database"):
        open_store(foreign)


def test_a_foreign_postgres_database_is_refused(pg_cluster: object) -> None:
    url = pg_cluster.create()  # type: ignore[attr-defined]
    from sqlalchemy import create_engine

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE users (id INTEGER)"))
    engine.dispose()
    with pytest.raises(InputError, match="not a rankproof history database"):
        open_store(url)


def test_hostile_names_are_stored_and_shown_verbatim(store_url: str, tmp_path: Path) -> None:
    from tests.history._planted import write_inputs, write_run

    hostile = "[bold]x[/bold]<script>alert(1)</script>';DROP\x1b[31m"
    qrels = write_inputs(tmp_path)
    run = write_run(tmp_path, 1, name="n")
    text_ = run.read_text().replace(" n\n", " " + hostile.replace("\x1b", "") + "\n")
    run.write_text(text_)
    out = tmp_path / "m.json"
    runner = CliRunner()
    got = runner.invoke(app, ["measure", str(qrels), str(run), "-m", "nDCG@10", "-f", "json",
                              "-o", str(out), "--history", store_url])
    assert got.exit_code == 0, got.output
    name = hostile.replace("\x1b", "")
    with open_store(store_url) as store:
        (info,) = store.results()
        assert info.runs == (name,)
        assert store.series(info, name, "nDCG@10")[0] == name
    got = runner.invoke(app, ["history", "list", "--history", store_url])
    assert name in got.stdout  # not read as Rich markup, not executed as SQL
    assert _counts(store_url)[0] == 1


def test_export_and_import_keep_every_result(
        fresh_url: str, planted_store: tuple[str, Planted], tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    url, planted = planted_store
    runner = CliRunner()
    for fmt in ("parquet", "jsonl"):
        got = runner.invoke(app, ["history", "export", "-f", fmt, "-o",
                                  str(tmp_path / f"all.{fmt}"), "--history", url])
        assert got.exit_code == 0, got.output
    table = pq.read_table(tmp_path / "all.parquet")
    assert table.num_rows == 20 * 2 * 50
    got = runner.invoke(app, ["history", "import", str(tmp_path / "all.jsonl"),
                              "--history", fresh_url])
    assert got.exit_code == 0 and "imported 20 results (0 already stored)" in got.stdout
    with open_store(url) as a, open_store(fresh_url) as b:
        assert [r.id for r in a.results()] == [r.id for r in b.results()]
        assert [r.git_commit for r in b.results()] == list(planted.commits)


def test_history_compare_pairs_two_stored_results(planted_store: tuple[str, Planted]) -> None:
    url, _ = planted_store
    with open_store(url) as store:
        ids = [r.id for r in store.results()]
    got = CliRunner().invoke(app, ["history", "compare", ids[10], ids[11], "-m", "nDCG@10",
                                   "-f", "json", "--history", url])
    assert got.exit_code == 0, got.output
    (row,) = json.loads(got.stdout)["rows"]
    assert row["verdict"] == "worse" and row["result"]["n"] == 50


def test_add_validates_every_file_before_storing_any(
        planted_store: tuple[str, Planted], tmp_path: Path) -> None:
    good = planted_store[1].files[0]
    bad = tmp_path / "other.json"
    bad.write_text('{"kind": "something.else", "schema_version": 1}')
    url = str(tmp_path / "h.db")
    got = CliRunner().invoke(app, ["history", "add", str(good), str(bad), "--history", url])
    assert got.exit_code == 2 and str(bad) in got.output and "not a result" in got.output
    with open_store(url) as store:
        assert store.results() == []


FIXTURES = ROOT / "tests" / "report" / "fixtures"


@pytest.mark.parametrize("name", ["eval", "cmp", "measure", "gate", "rag", "discovery"])
def test_every_result_kind_is_kept_with_its_columns(tmp_path: Path, name: str) -> None:
    doc = json.loads((FIXTURES / f"{name}.json").read_text())
    with open_store(tmp_path / "h.db") as store:
        rid, new = store.add(doc, name, branch="main")
        info = store.get(rid)
        arrays = store.all_series(info)
        assert new and store.document(info) == doc
    prov = doc.get("provenance") or {}
    assert info.git_commit == prov.get("git_commit") and info.git_branch == "main"
    assert info.tool_version == prov.get("tool_version")
    if name in ("gate", "discovery"):  # no per-query values to keep
        assert arrays == []
    else:
        assert arrays and all(len(q) == len(v) > 0 for _, _, q, v in arrays)
        assert set(info.measures) == {m for _, m, _, _ in arrays}
    if name == "eval":
        assert info.corpus_digest == prov["corpus_digest"]
        assert info.config_digest == prov["config_digest"]


def test_compare_records_what_it_writes(fresh_url: str, planted_store: tuple[str, Planted],
                                        tmp_path: Path) -> None:
    data = planted_store[1].files[0].parent
    out = tmp_path / "cmp.json"
    got = CliRunner().invoke(app, ["compare", str(data / "qrels.txt"), str(data / "run11.txt"),
                                   str(data / "run12.txt"), "-m", "nDCG@10", "-o", str(out),
                                   "--resamples", "1000", "--history", fresh_url])
    assert got.exit_code == 0, got.output
    with open_store(fresh_url) as store:
        (info,) = store.results(kind="comparison")
        assert store.document(info) == json.loads(out.read_text())
        assert len(store.all_series(info)) == 2  # each side's nDCG@10
    got = CliRunner().invoke(app, ["compare", str(data / "qrels.txt"), str(data / "run11.txt"),
                                   str(data / "run12.txt"), "--history", fresh_url])
    assert got.exit_code == 2 and "give -o PATH" in got.output
