"""``rankproof export``: format round trips, the tie-safe canonical form, refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.data import Run, load_qrels, load_run, read_parquet_run
from rankproof.measures import evaluate

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
RUNS = DATA / "rankllm_runs"
QRELS = {"dl19": DATA / "trec_dl" / "qrels.dl19-passage.txt",
         "dl20": DATA / "trec_dl" / "qrels.dl20-passage.txt"}
MEASURES = ("nDCG@10", "nDCG", "RR@10", "RR", "AP", "AP@100", "R@100", "P@10", "P(rel=2)@5",
            "Rprec", "Bpref", "Success@10", "Judged@10", "NumRet", "NumRel", "NumRelRet")
runner = CliRunner()


def export(*args: object) -> tuple[int, str, str]:
    result = runner.invoke(app, ["export", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def _rows_of_trec_file(path: Path) -> list[tuple[str, str, float, int]]:
    out = []
    for line in path.read_text().splitlines():
        q, _, d, r, s, _tag = line.split()
        out.append((q, d, float(s), int(r)))
    return out


def _rows(run: Run) -> list[tuple[str, str, float, int]]:
    assert run.ranks is not None
    return list(zip(run.qids().to_pylist(), run.docids.to_pylist(), run.scores.tolist(),
                    run.ranks.tolist(), strict=True))


def test_trec_jsonl_parquet_trec_round_trip_keeps_every_row(tmp_path: Path) -> None:
    """BM25's rank column agrees with trec_eval's order, so every 4-tuple survives."""
    source = RUNS / "BM25" / "trec_results_dl19.txt"
    jsonl, parquet, trec = tmp_path / "r.jsonl", tmp_path / "r.parquet", tmp_path / "back.trec"
    for src, dst in ((source, jsonl), (jsonl, parquet), (parquet, trec)):
        code, _, err = export(src, "-o", dst, "--tag", "rank")
        assert code == 0, err
    original = _rows_of_trec_file(source)
    assert _rows(load_run(jsonl)) == original
    assert _rows(read_parquet_run(parquet)) == original
    assert _rows_of_trec_file(trec) == original
    assert trec.read_bytes() == source.read_bytes()  # same tag: byte for byte
    assert read_parquet_run(parquet).tag == "rank"


def test_jsonl_and_parquet_keep_a_rank_column_that_trec_eval_would_not(tmp_path: Path) -> None:
    """REP_LLAMA's ties: its rank column is not trec_eval's order. JSON Lines and Parquet keep
    it as written; a TREC file is written in trec_eval's order, and says so."""
    source = RUNS / "REP_LLAMA" / "trec_results_dl19.txt"
    code, _, err = export(source, "-o", tmp_path / "r.jsonl")
    assert code == 0 and "40001 tied scores are kept" in err
    code, _, err = export(tmp_path / "r.jsonl", "-o", tmp_path / "r.parquet")
    assert code == 0
    original = _rows_of_trec_file(source)
    assert _rows(load_run(tmp_path / "r.jsonl")) == original
    assert _rows(read_parquet_run(tmp_path / "r.parquet")) == original
    code, _, err = export(tmp_path / "r.parquet", "-o", tmp_path / "back.trec")
    assert code == 0 and "rank column of 40014 rows is rewritten" in err
    back = _rows_of_trec_file(tmp_path / "back.trec")
    assert sorted((q, d, s) for q, d, s, _ in back) == sorted((q, d, s) for q, d, s, _ in original)


@pytest.mark.parametrize("year", ["dl19", "dl20"])
def test_canonical_export_evaluates_identically_everywhere(year: str, tmp_path: Path) -> None:
    """Before and after a canonical export, per topic, with rankproof and pytrec_eval; and
    an evaluator that breaks ties another way agrees only after it."""
    import ir_measures
    import pytrec_eval

    source = RUNS / "REP_LLAMA" / f"trec_results_{year}.txt"
    canon_path = tmp_path / "canon.trec"
    code, _, err = export(source, "--canonical", "-o", canon_path, "--tag", "canon")
    assert code == 0, err
    qrels = load_qrels(QRELS[year])
    raw, canon = load_run(source), load_run(canon_path)
    assert canon.ranks is not None and np.array_equal(canon.scores, 1.0 / canon.ranks)
    before = evaluate(qrels, raw, MEASURES, rel_level=2)
    after = evaluate(qrels, canon, MEASURES, rel_level=2)
    assert before.qids == after.qids
    assert np.array_equal(before.values, after.values)  # every measure, every topic

    # pytrec_eval runs trec_eval's own sort (score, then docid descending): it agrees on
    # the raw scores already, and on the canonical file.
    names = {"ndcg_cut_10": "nDCG@10", "map": "AP", "P_10": "P@10", "recall_100": "R@100",
             "recip_rank": "RR", "bpref": "bpref", "Rprec": "Rprec"}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels.to_dict(), {"ndcg_cut.10", "map", "P.10", "recall.100", "recip_rank", "bpref",
                          "Rprec"}, relevance_level=2)
    for run in (raw, canon):
        got = evaluator.evaluate(run.to_dict())
        for name, measure in names.items():
            mine = before.scores(measure)
            assert {q: got[q][name] for q in mine} == pytest.approx(mine, abs=1e-12), name

    # An evaluator that breaks ties otherwise: rankproof reading the file's rank column
    # (as a rank-order tool does) and ir_measures' msmarco provider (RR@10) and its judged
    # provider (Judged@10). Each disagrees on the raw file and agrees on the canonical one.
    by_rank_raw = evaluate(qrels, raw, MEASURES, rel_level=2, order="rank")
    by_rank_canon = evaluate(qrels, canon, MEASURES, rel_level=2, order="rank")
    assert not np.array_equal(by_rank_raw.values, before.values)
    assert np.array_equal(by_rank_canon.values, before.values)
    irm = [ir_measures.parse_measure("RR(rel=2)@10"), ir_measures.parse_measure("Judged@10")]
    for run, agrees in ((raw, False), (canon, True)):
        values = {(str(m.measure), m.query_id): m.value
                  for m in ir_measures.iter_calc(irm, qrels.to_dict(), run.to_dict())}
        same = all(
            values[("RR(rel=2)@10", q)] == pytest.approx(before.scores("RR@10")[q], abs=1e-12)
            and values[("Judged@10", q)] == pytest.approx(before.scores("Judged@10")[q],
                                                          abs=1e-12)
            for q in before.qids)
        assert same is agrees


def test_a_damaged_canonical_file_is_refused(tmp_path: Path) -> None:
    source = RUNS / "REP_LLAMA" / "trec_results_dl19.txt"
    canon = tmp_path / "canon.trec"
    assert export(source, "--canonical", "-o", canon)[0] == 0
    lines = canon.read_text().splitlines(keepends=True)
    cases = {
        "repeated": (1, lines[1].replace(" 2 0.5 ", " 3 0.5 "),
                     "line 3, field 'rank': not a canonical run: query '1037798', document "
                     "'8760870': rank 3 is repeated (also on line 2)"),
        "score": (4, lines[4].replace(" 5 0.2 ", " 5 0.2001 "),
                  "line 5, field 'score': not a canonical run: query '1037798', document "
                  "'8760864': score 0.2001 is not 1/rank = 0.2 (rank 5)"),
        "gap": (1, "", "line 2, field 'rank': not a canonical run: query '1037798', document "
                       "'8760870': rank 2 is missing"),
    }
    for name, (index, replacement, message) in cases.items():
        damaged = tmp_path / f"{name}.trec"
        damaged.write_text("".join([*lines[:index], replacement, *lines[index + 1:]]))
        out = tmp_path / f"{name}.out"
        code, _, err = export(damaged, "-o", out)
        assert code == 2, name
        assert f"{damaged}, {message}" in " ".join(err.split()), (name, err)
        assert not out.exists()


def test_check_canonical_refuses_an_ordinary_run(tmp_path: Path) -> None:
    source = RUNS / "BM25" / "trec_results_dl19.txt"
    code, _, err = export(source, "--check-canonical", "-o", tmp_path / "x.trec")
    assert code == 2
    assert "line 1, field 'score': not a canonical run" in " ".join(err.split())
    assert export(source, "-o", tmp_path / "x.trec")[0] == 0  # without the flag: exported


def test_output_onto_the_input_is_refused_and_the_input_kept(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_bytes((RUNS / "BM25" / "trec_results_dl19.txt").read_bytes())
    before = run.read_bytes()
    for args in (("-o", run), ("--canonical", "-o", run), ("-f", "jsonl", "-o", run)):
        code, _, err = export(run, *args)
        assert code == 2 and "would replace the input" in err
        assert run.read_bytes() == before
    link = tmp_path / "link.trec"
    link.symlink_to(run)
    code, _, err = export(run, "-o", link)
    assert code == 2 and run.read_bytes() == before


def test_standard_output_and_formats(tmp_path: Path) -> None:
    source = RUNS / "BM25" / "trec_results_dl19.txt"
    code, out, _ = export(source, "--canonical", "-f", "jsonl", "-o", "-")
    assert code == 0
    first = out.splitlines()[0]
    assert first == '{"qid": "264014", "docid": "5611210", "score": 1.0, "rank": 1}'
    code, _, err = export(source, "-f", "parquet", "-o", "-")
    assert code == 2 and "Parquet is binary" in err
