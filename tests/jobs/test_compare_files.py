"""`rankproof.jobs.compare_files`: the verb behind ``rankproof compare`` and the experiment
file's ``compare`` stage. Its rows are `rankproof.compare`'s over the same runs read whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankproof import InputError, compare
from rankproof.data import load_qrels, load_run
from rankproof.jobs import CompareFilesRequest, RunFilesRequest, compare_files
from rankproof.measures import resolve_measures
from rankproof.stats import StatSettings

TOY = Path(__file__).resolve().parents[2] / "examples" / "toy"
RUNS = (str(TOY / "bm25.run"), str(TOY / "dense.run"))
STATS = StatSettings(resamples=2000, seed=7)


def _request(**files: object) -> CompareFilesRequest:
    fields: dict[str, object] = {"qrels": str(TOY / "qrels.txt"), "runs": RUNS,
                                 "measures": resolve_measures(["nDCG@10 AP"]), **files}
    return CompareFilesRequest(files=RunFilesRequest(**fields), stats=STATS)  # type: ignore[arg-type]


def test_the_rows_are_compare_s_over_the_runs_read_whole() -> None:
    done = compare_files(_request())
    expected = compare(load_qrels(str(TOY / "qrels.txt")),
                       [load_run(p) for p in RUNS], ["nDCG@10", "AP"], stats=STATS)
    got = done.comparison
    assert [(r.candidate, r.measure, r.verdict) for r in got.rows] == [
        (r.candidate, r.measure, r.verdict) for r in expected.rows]
    assert [r.p_corrected for r in got.rows] == [r.p_corrected for r in expected.rows]
    assert [(r.result.ci_low, r.result.ci_high) for r in got.rows] == [
        (r.result.ci_low, r.result.ci_high) for r in expected.rows]
    assert got.seed == 7 and list(done.files.tables) == ["bm25", "dense"]
    # The evaluation kept each measure's Judged@k column beside it, for the caveats.
    assert {str(m) for m in done.files.runs[0].per_query.measures} >= {"nDCG@10", "Judged@10"}


def test_the_evidence_says_which_topics_have_no_text() -> None:
    qids = load_qrels(str(TOY / "qrels.txt")).topics
    request = CompareFilesRequest(
        files=RunFilesRequest(qrels=str(TOY / "qrels.txt"), runs=RUNS,
                              measures=resolve_measures(["AP"]), evidence_depth=3),
        stats=STATS, queries={qids[0]: "some text"}, queries_source="topics.tsv")
    result = compare_files(request).comparison
    assert result.evidence is not None and result.evidence.k == 3
    assert sorted(result.evidence.top) == ["bm25", "dense"]
    assert f"{len(qids) - 1} of {len(qids)} topic(s) have no text in topics.tsv" in " ".join(
        result.caveats)


def test_one_run_is_not_a_comparison() -> None:
    with pytest.raises(InputError, match="baseline and at least one candidate"):
        _request(runs=RUNS[:1])


def test_m_and_j_reach_the_comparison_and_are_said() -> None:
    from rankproof.measures import EvalOptions

    limited = compare_files(_request(options=EvalOptions(max_retrieved=2))).comparison
    plain = compare_files(_request()).comparison
    assert [r.result.mean_a for r in limited.rows] != [r.result.mean_a for r in plain.rows]
    assert any("only the first 2 documents" in c for c in limited.caveats)
    assert not any("only the first" in c for c in plain.caveats)
