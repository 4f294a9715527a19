"""Class 6: depth and size bounds in every reader (`rankproof._limits`).

Every JSON and YAML reader refuses nesting deeper than ``MAX_NESTING_DEPTH``
(64) and integers longer than ``MAX_INT_DIGITS`` digits, and every YAML
reader refuses aliases that expand past ``MAX_YAML_NODES`` nodes — each as a
typed error (`InputError`, or `ConfigError` for a checks file) that names the
file, the line where known and the field. Messages never quote an unbounded
value: a long one is cut at ``MAX_SHOWN_CHARS``. A refusal by a command that
writes leaves nothing written.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rankproof import ConfigError, InputError, _limits
from rankproof.cli import app
from rankproof.corpus import adapt_beir, read_corpus, read_judgments
from rankproof.data import (
    read_beir_qrels,
    read_document,
    read_json_qrels,
    read_json_run,
    read_jsonl_qrels,
    read_jsonl_run,
    read_msmarco_run,
    read_trec_qrels,
    read_trec_run,
)
from rankproof.gate import load_baseline, load_report, parse_checks
from rankproof.harness import EvalConfig, golden_inputs, run_experiment
from rankproof.targets import load_goldens

DEPTH = _limits.MAX_NESTING_DEPTH
TOO_DEEP = "[" * (DEPTH + 1) + "]" * (DEPTH + 1)
DEEP_OK = "[" * DEPTH + "]" * DEPTH
HUGE = "9" * 5000  # more than Python's own 4,300-digit limit: int() would raise ValueError
LONG = "9" * (_limits.MAX_INT_DIGITS + 1)
runner = CliRunner()


def located(exc: InputError, path: Path, line: int | None, field: str | None) -> None:
    """The error names the file, the line and (the start of) the field, in attributes and text."""
    assert exc.path == str(path), exc
    assert exc.line == line, exc
    if field is None:
        assert exc.field is None, exc
    else:
        assert exc.field is not None and exc.field.startswith(field), exc
        assert f"field '{field}" in str(exc)
    assert str(exc).startswith(str(path))
    assert len(str(exc)) < 1_000, len(str(exc))


# -- fixtures: small real inputs of each kind ---------------------------------------

@pytest.fixture
def corpus(tmp_path: Path) -> Any:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pumps.md").write_text("Grease the pump bearings every 2000 hours.\n")
    return read_corpus(docs)


def judgment(**extra: Any) -> str:
    row = {"query_id": "grease-interval", "query": "How often?", "category": "normal",
           "gold": [{"doc": "pumps.md", "quote": "every 2000 hours"}], **extra}
    return json.dumps(row)


def beir_folder(root: Path, *, corpus_line: str | None = None, grade: str = "1") -> Path:
    root.mkdir()
    lines = [json.dumps({"_id": "d1", "title": "", "text": "pump bearings"})]
    if corpus_line is not None:
        lines.append(corpus_line)
    (root / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "pumps?"}) + "\n")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t{grade}\n")
    return root


# -- nesting depth -----------------------------------------------------------------

def test_judgments_nesting_is_bounded(tmp_path: Path, corpus: Any) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(judgment() + "\n" + judgment(query_id="b", meta={"x": json.loads(DEEP_OK)})
                    + "\n")
    # 64 levels inside meta's own object are 66 from the line's object: refused.
    with pytest.raises(InputError, match=f"nested deeper than {DEPTH} levels") as err:
        read_judgments(path, corpus)
    located(err.value, path, 2, "meta.x[0][0]")
    ok = tmp_path / "ok.jsonl"
    ok.write_text(judgment(meta={"x": json.loads("[" * (DEPTH - 2) + "]" * (DEPTH - 2))})
                  + "\n")
    assert len(read_judgments(ok, corpus)) == 1


@pytest.mark.parametrize(("name", "text", "line", "field"), [
    ("g.jsonl", '{"id": "a", "query": "q"}\n{"id": "b", "query": "q", "meta": %s}\n', 2,
     "meta[0]"),
    ("g.yaml", "- id: a\n  query: q\n- id: b\n  query: q\n  meta: %s\n", 5, "[1].meta[0]"),
    ("h.yaml", "cases:\n  - id: b\n    query: q\n    meta: {k: %s}\n", 4,
     "cases[0].meta.k[0]"),
])
def test_goldens_nesting_is_bounded(tmp_path: Path, name: str, text: str, line: int,
                                    field: str) -> None:
    path = tmp_path / name
    path.write_text(text % TOO_DEEP)
    with pytest.raises(InputError, match="nested deeper than") as err:
        load_goldens(path)
    located(err.value, path, line, field)


def test_beir_adapter_nesting_is_bounded_and_writes_nothing(tmp_path: Path) -> None:
    src = beir_folder(tmp_path / "beir", corpus_line=json.dumps(
        {"_id": "d2", "text": "t", "metadata": json.loads(DEEP_OK)}))
    out = tmp_path / "out"
    with pytest.raises(InputError, match="nested deeper than") as err:
        adapt_beir(src, out)
    located(err.value, src / "corpus.jsonl", 2, "metadata[0]")
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["beir"]


def test_runs_and_qrels_nesting_is_bounded(tmp_path: Path) -> None:
    jsonl = tmp_path / "r.jsonl"
    jsonl.write_text('{"qid": "q", "docid": "d", "score": 1}\n'
                     f'{{"qid": "q", "docid": "e", "score": 2, "x": {TOO_DEEP}}}\n')
    with pytest.raises(InputError, match="nested deeper than") as err:
        read_jsonl_run(jsonl)
    located(err.value, jsonl, 2, "x[0]")
    qrels = tmp_path / "q.jsonl"
    qrels.write_text(f'{{"qid": "q", "docid": "e", "rel": {TOO_DEEP}}}\n')
    with pytest.raises(InputError, match="nested deeper than") as err:
        read_jsonl_qrels(qrels)
    located(err.value, qrels, 1, "rel[0]")
    # A JSON document {qid: {docid: value}}: a nested value is refused where it sits.
    doc = tmp_path / "r.json"
    doc.write_text('{"q": {"d": 1,\n "e": ' + TOO_DEEP + "}}")
    with pytest.raises(InputError, match="score of \\('q', 'e'\\) must be a number") as err:
        read_json_run(doc)
    located(err.value, doc, 2, "score")


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_document_nesting_is_bounded(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"d{suffix}"
    path.write_text('{"a": {"b": ' + TOO_DEEP + "}}" if suffix == ".json"
                    else f"a:\n  b: {TOO_DEEP}\n")
    with pytest.raises(InputError, match="cannot read the file: nested deeper than") as err:
        read_document(path)
    located(err.value, path, None if suffix == ".json" else 2, "a.b[0]")
    # Ten thousand levels (past Python's recursion limit) are refused, not a crash.
    very = tmp_path / f"v{suffix}"
    very.write_text("[" * 10_000 + "]" * 10_000)
    with pytest.raises(InputError, match=r"nested too deeply|nested deeper than"):
        read_document(very)


# -- reports, baselines, checks files --------------------------------------------------

REPORT_LIKE = {"schema_version": 2, "kind": "rankproof.eval", "config": {"extra": None}}


@pytest.mark.parametrize(("load", "doc", "field"), [
    (load_report, {**REPORT_LIKE, "config": {"extra": "DEEP"}}, "config.extra[0]"),
    (load_report, {**REPORT_LIKE, "provenance": {"seed": "HUGE"}}, "provenance.seed"),
    (load_baseline, {"schema_version": 2, "kind": "rankproof.baseline",
                     "source": {"x": "DEEP"}}, "source.x[0]"),
    (load_baseline, {"schema_version": 2, "kind": "rankproof.baseline",
                     "run": {"rows": [{"values": {"R@1": "HUGE"}}]}}, "run.rows[0].values.R@1"),
])
def test_our_own_files_are_bounded(tmp_path: Path, load: Callable[[Path], object],
                                   doc: dict[str, Any], field: str) -> None:
    path = tmp_path / "file.json"
    path.write_text(json.dumps(doc, indent=1).replace('"DEEP"', TOO_DEEP)
                    .replace('"HUGE"', HUGE))
    with pytest.raises(InputError) as err:
        load(path)
    assert "nested deeper than" in str(err.value) or "5,000 digits" in str(err.value)
    located(err.value, path, None, field)


@pytest.mark.parametrize(("text", "where"), [
    ("checks:\n  - id: a\n    metric: nDCG@10\n    vs_baseline: no_significant_regression\n"
     "    scope: " + TOO_DEEP + "\n", "c.yaml, line 5: field 'checks[0].scope[0]"),
    (f"seed: {HUGE}\nchecks:\n  - id: a\n    metric: nDCG@10\n    op: '>='\n"
     "    threshold: 0.5\n", "c.yaml, line 1: field 'seed': the value is an integer of 5,000"),
])
def test_checks_files_are_bounded(text: str, where: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_checks(text, source="c.yaml")
    assert str(err.value).startswith(where), err.value
    assert len(str(err.value)) < 1_000


# -- YAML aliases ---------------------------------------------------------------------

def _laughs(indent: str = "") -> str:
    lines = [f"{indent}l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_goldens_file_is_refused_fast(tmp_path: Path) -> None:
    # Before: 51 s and a MemoryError. A separate process with a timeout, so a
    # regression fails this test instead of hanging the suite.
    path = tmp_path / "bomb.yaml"
    path.write_text("- id: a\n  query: q\n  meta:\n" + _laughs("    "))
    script = ("import sys\nfrom rankproof import InputError\n"
              "from rankproof.targets import load_goldens\n"
              "try:\n    load_goldens(sys.argv[1])\n"
              "except InputError as exc:\n    print(exc)\n    sys.exit(2)\n")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert f"{path}: the document expands to more than {_limits.MAX_YAML_NODES:,} nodes" \
        in proc.stdout
    assert time.monotonic() - start < 30


def test_every_yaml_reader_bounds_aliases(tmp_path: Path) -> None:
    bomb = _laughs()
    with pytest.raises(ConfigError, match="expands to more than 10,000 nodes"):
        parse_checks(bomb + "checks: []\n", source="c.yaml")
    path = tmp_path / "r.yaml"
    path.write_text(bomb)
    with pytest.raises(InputError, match="expands to more than 10,000 nodes"):
        read_document(path)
    # A chain of aliases, each small, that nests past the depth bound once expanded.
    chain = tmp_path / "chain.yaml"
    chain.write_text("x0: &x0 [1]\n" + "".join(f"x{i}: &x{i} [*x{i - 1}]\n"
                                               for i in range(1, 100)))
    with pytest.raises(InputError, match="once its aliases are expanded"):
        read_document(chain)
    cycle = tmp_path / "cycle.yaml"
    cycle.write_text("- id: a\n  query: q\n  meta: &m {self: *m}\n")
    with pytest.raises(InputError, match="a cycle") as err:
        load_goldens(cycle)
    assert err.value.line == 3


# -- integers of thousands of digits ---------------------------------------------------

@pytest.mark.parametrize(("read", "name", "text", "line", "field"), [
    (read_trec_qrels, "q.txt", "q 0 d 1\nq 0 e {n}\n", 2, "rel"),
    (read_beir_qrels, "q.tsv", "query-id\tcorpus-id\tscore\nq\td\t{n}\n", 2, "score"),
    (read_msmarco_run, "r.tsv", "q\td\t1\nq\te\t{n}\n", 2, "rank"),
    (read_jsonl_qrels, "q.jsonl", '{{"qid": "q", "docid": "d", "rel": {n}}}\n', 1, "rel"),
    (read_jsonl_run, "r.jsonl", '{{"qid": "q", "docid": "d", "score": {n}}}\n', 1, "score"),
    (read_jsonl_run, "s.jsonl", '{{"qid": "q", "docid": "d", "score": 1, "rank": {n}}}\n', 1,
     "rank"),
    (read_json_qrels, "q.json", '{{"q": {{"d": 1,\n "e": {n}}}}}', 2, "rel"),
    (read_json_run, "r.json", '{{"q": {{"d": 1,\n "e": {n}}}}}', 2, "score"),
])
@pytest.mark.parametrize("digits", [HUGE, LONG])
def test_huge_integers_are_typed_errors(tmp_path: Path, read: Callable[[Path], object],
                                        name: str, text: str, line: int, field: str,
                                        digits: str) -> None:
    path = tmp_path / name
    path.write_text(text.format(n=digits))
    with pytest.raises(InputError, match=f"{len(digits):,} digits") as err:
        read(path)
    located(err.value, path, line, field)


def test_a_huge_rank_in_a_trec_run_is_not_a_crash(tmp_path: Path) -> None:
    # trec_eval ignores the rank column; an unreadable one only disables order="rank".
    path = tmp_path / "r.run"
    path.write_text(f"q Q0 d 1 2.5 t\nq Q0 e {HUGE} 1.5 t\n")
    run = read_trec_run(path)
    assert run.ranks is None and "rank column is not an integer at line 2" in run.notes[0]


def test_huge_integers_in_judgments_goldens_and_beir(tmp_path: Path, corpus: Any) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(judgment(meta={"n": 1}).replace(": 1}", f": {HUGE}}}") + "\n")
    with pytest.raises(InputError, match="5,000 digits") as err:
        read_judgments(path, corpus)
    located(err.value, path, 1, "meta.n")
    goldens = tmp_path / "g.yaml"
    goldens.write_text(f"- id: a\n  query: q\n  relevance:\n    d1: {HUGE}\n")
    with pytest.raises(InputError, match="5,000 digits") as err:
        load_goldens(goldens)
    located(err.value, goldens, 4, "[0].relevance.d1")
    src = beir_folder(tmp_path / "beir", grade=HUGE)
    with pytest.raises(InputError, match="5,000 digits") as err:
        adapt_beir(src, tmp_path / "out")
    located(err.value, src / "qrels" / "test.tsv", 2, "score")
    assert not (tmp_path / "out").exists()


# -- messages quote at most MAX_SHOWN_CHARS of any value -------------------------------

def test_messages_cut_long_values(tmp_path: Path, corpus: Any) -> None:
    long = "x" * 100_000
    cases: list[tuple[Callable[[], object], type[Exception]]] = []
    qrels = tmp_path / "q.txt"
    qrels.write_text(f"q 0 d {long}\n")
    cases.append((lambda: read_trec_qrels(qrels), InputError))
    run = tmp_path / "r.run"
    run.write_text(f"q Q0 d 1 {long} t\n")
    cases.append((lambda: read_trec_run(run), InputError))
    jsonl = tmp_path / "r.jsonl"
    jsonl.write_text(json.dumps({"qid": "q", "docid": "d", "score": long}) + "\n")
    cases.append((lambda: read_jsonl_run(jsonl), InputError))
    unknown = tmp_path / "u.jsonl"
    unknown.write_text(json.dumps({"qid": "q", "docid": "d", "score": 1, long: 1}) + "\n")
    cases.append((lambda: read_jsonl_run(unknown), InputError))
    judged = tmp_path / "j.jsonl"
    judged.write_text(judgment(query_id=long.upper()) + "\n")
    cases.append((lambda: read_judgments(judged, corpus), InputError))
    quote = tmp_path / "k.jsonl"
    quote.write_text(judgment(gold=[{"doc": long, "quote": "q"}]) + "\n")
    cases.append((lambda: read_judgments(quote, corpus), InputError))
    csv = tmp_path / "g.csv"
    csv.write_text(f"id,query,relevant\na,q,{long};;\n")
    cases.append((lambda: load_goldens(csv), InputError))
    beir = beir_folder(tmp_path / "beir", corpus_line=json.dumps({"_id": long + "/", "text": "t"}))
    cases.append((lambda: adapt_beir(beir, tmp_path / "out"), InputError))
    cases.append((lambda: parse_checks(f"? {long}\n: 1\nchecks: []\n"), ConfigError))
    for call, kind in cases:
        with pytest.raises(kind) as err:
            call()
        assert len(str(err.value)) < 1_500, (call, len(str(err.value)), str(err.value)[:300])
        assert "…" in str(err.value), str(err.value)[:300]


# -- through the CLI: exit 2, the file named, nothing written -----------------------------

def test_the_cli_refuses_a_huge_label_and_writes_nothing(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.jsonl"
    qrels.write_text(f'{{"qid": "q1", "docid": "d021", "rel": {HUGE}}}\n')
    run = Path(__file__).resolve().parents[2] / "examples" / "toy" / "bm25.run"
    out = tmp_path / "table.txt"
    result = runner.invoke(app, ["measure", str(qrels), str(run), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert f"{qrels}, line 1, field 'rel'" in result.stderr
    assert "5,000 digits" in result.stderr
    assert not out.exists()


def test_the_cli_adapter_refuses_deep_nesting_and_writes_nothing(tmp_path: Path) -> None:
    src = beir_folder(tmp_path / "beir", corpus_line=json.dumps(
        {"_id": "d2", "text": "t", "metadata": json.loads(DEEP_OK)}))
    out = tmp_path / "out"
    result = runner.invoke(app, ["adapt", "beir", str(src), str(out)])
    assert result.exit_code == 2, result.output
    assert f"{src / 'corpus.jsonl'}, line 2, field 'metadata[0]" in result.stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["beir"]


def test_the_cli_gate_refuses_a_bomb_checks_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKPROOF_CACHE", str(tmp_path / "cache"))
    report, _ = run_experiment(golden_inputs("chunk", 800, 100),
                               EvalConfig(stages=("bm25",), resamples=100))
    report_path = tmp_path / "r.json"
    report_path.write_text(report.model_dump_json())
    checks = tmp_path / "checks.yaml"
    checks.write_text(_laughs() + "checks:\n  - id: a\n    metric: nDCG@10\n    op: '>='\n"
                      "    threshold: 0.5\n")
    junit = tmp_path / "out.xml"
    result = runner.invoke(app, ["gate", str(checks), "--report", str(report_path),
                                 "--junit", str(junit)])
    assert result.exit_code == 2, result.output
    assert f"{checks}: the document expands to more than" in result.stderr
    assert not junit.exists()
