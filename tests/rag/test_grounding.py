"""Grounding: lexical, n-gram and NLI, every value computed by hand in the comments."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rankproof._errors import ConfigError, InputError
from rankproof.rag._answers import Context
from rankproof.rag._grounding import (
    DEFAULT_ENTAILMENT_THRESHOLD,
    NGRAM_ORDERS,
    EntailmentScorer,
    TransformersNLIScorer,
    lexical_grounding,
    ngram_grounding,
    ngram_groundings,
    nli_grounding,
    split_sentences,
)
from rankproof.rag._text import content_tokens, tokens

FRANCE = "The capital of France is Paris."  # tokens: capital of france is paris
GERMANY = "Berlin is a city in Germany."    # tokens: berlin is city in germany


# ---------------------------------------------------------------- lexical


def test_lexical_share_of_content_tokens() -> None:
    # "Paris is the capital of France and Berlin." -> content: paris capital france berlin
    # (is, of, and are stop words; "the" is an article). In FRANCE: paris capital france.
    g = lexical_grounding("Paris is the capital of France and Berlin.", [FRANCE, "Rome is old."])
    assert (g.value, g.matched, g.total, g.method) == (0.75, 3, 4, "lexical")
    assert g.unsupported == ("berlin",)
    assert g.scorable and g.reason is None


def test_lexical_counts_occurrences_not_types() -> None:
    # berlin berlin paris: only paris is shown -> 1/3
    g = lexical_grounding("Berlin, Berlin, Paris", [FRANCE])
    assert g.value == pytest.approx(1 / 3)
    assert g.unsupported == ("berlin", "berlin")


def test_lexical_reads_context_objects_and_ignores_case_and_punctuation() -> None:
    g = lexical_grounding("PARIS!", [Context("d1", FRANCE)])
    assert g.value == 1.0


def test_lexical_no_passages_scores_zero() -> None:
    assert lexical_grounding("Paris", []).value == 0.0


@pytest.mark.parametrize("answer", ["", "No.", "It is what it is."])
def test_lexical_nothing_to_check_is_not_scorable(answer: str) -> None:
    assert content_tokens(answer) == []
    g = lexical_grounding(answer, [FRANCE])
    assert g.value is None and not g.scorable
    assert g.reason == "the answer has no content tokens to check"
    assert g.to_dict()["value"] is None


def test_bad_context_type_is_an_input_error() -> None:
    with pytest.raises(InputError, match="a context must be a string or have a text, got int"):
        lexical_grounding("Paris", [3])


# ---------------------------------------------------------------- n-grams


def test_ngram_hand_values() -> None:
    # answer tokens: paris is capital of spain ; FRANCE tokens: capital of france is paris
    answer = "Paris is the capital of Spain."
    assert tokens(answer) == ["paris", "is", "capital", "of", "spain"]
    two = ngram_grounding(answer, [FRANCE], 2)
    # 2-grams: (paris is) (is capital) (capital of) (of spain): only "capital of" shown
    assert (two.value, two.matched, two.total, two.method) == (0.25, 1, 4, "ngram-2")
    assert two.unsupported == ("paris is", "is capital", "of spain")
    three = ngram_grounding(answer, [FRANCE], 3)
    assert (three.value, three.total) == (0.0, 3)
    four = ngram_grounding(answer, [FRANCE], 4)
    assert (four.value, four.total) == (0.0, 2)


def test_ngram_keeps_stop_words_and_order() -> None:
    # tokens: capital of france is paris -> all four 2-grams, three 3-grams, two 4-grams shown
    all_ = ngram_groundings("the capital of France is Paris", [FRANCE])
    assert tuple(all_) == NGRAM_ORDERS == (2, 3, 4)
    assert [all_[n].value for n in NGRAM_ORDERS] == [1.0, 1.0, 1.0]
    assert [all_[n].total for n in NGRAM_ORDERS] == [4, 3, 2]


def test_ngram_may_not_straddle_two_passages() -> None:
    # (capital of) is in passage 1, (of france) spans passages 1 and 2 -> 1/2
    assert ngram_grounding("capital of France", ["capital of", "France"], 2).value == 0.5
    assert ngram_grounding("capital of France", ["capital of", "France"], 3).value == 0.0
    assert ngram_grounding("capital of France", ["capital of", "France"], 3).total == 1


def test_ngram_short_answer_is_one_gram() -> None:
    g = ngram_grounding("Paris", [FRANCE], 4)
    assert (g.value, g.matched, g.total, g.unsupported) == (1.0, 1, 1, ())
    g = ngram_grounding("Paris France", [FRANCE], 3)  # "paris france" is not contiguous
    assert (g.value, g.total, g.unsupported) == (0.0, 1, ("paris france",))
    # a stop-word answer has tokens, so n-gram grounding can score it
    assert ngram_grounding("No.", ["No way."], 2).value == 1.0


def test_ngram_empty_answer_is_not_scorable() -> None:
    g = ngram_grounding("", [FRANCE], 2)
    assert g.value is None and g.reason == "the answer has no tokens to check"


@pytest.mark.parametrize("n", [0, -1, 2.0, True])
def test_ngram_order_is_validated(n: object) -> None:
    with pytest.raises(InputError, match="the n-gram order must be an integer >= 1"):
        ngram_grounding("Paris", [FRANCE], n)  # type: ignore[arg-type]


# ---------------------------------------------------------------- sentences


def test_split_sentences_rule() -> None:
    assert split_sentences("Paris is big. It is old!  Why?") == [
        "Paris is big.", "It is old!", "Why?"]
    assert split_sentences('He said "Go." Then left.\nNew   line') == [
        'He said "Go."', "Then left.", "New line"]
    assert split_sentences("3.5 million people") == ["3.5 million people"]
    assert split_sentences("") == []
    assert split_sentences("... !") == []


# ---------------------------------------------------------------- NLI, deterministic scorer


class Containment:
    """Deterministic scorer: share of the hypothesis's content tokens found in the premise."""

    name = "containment"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def entailment(self, premise: str, hypothesis: str) -> float:
        self.calls.append((premise, hypothesis))
        wanted = content_tokens(hypothesis)
        shown = set(tokens(premise))
        return sum(t in shown for t in wanted) / len(wanted) if wanted else 0.0


ANSWER = "Paris is the capital of France [1]. Berlin is in Spain. It rains!"


def test_nli_hand_values_default_threshold() -> None:
    scorer = Containment()
    assert isinstance(scorer, EntailmentScorer)
    r = nli_grounding(ANSWER, [Context("a", FRANCE), Context("b", GERMANY)], scorer)
    # S1 "Paris is the capital of France." (marker removed): paris capital france -> 1.0 on a
    # S2 "Berlin is in Spain.": berlin spain -> a 0, b 1/2 -> best 0.5 at b, 0.5 >= 0.5
    # S3 "It rains!": rains -> 0 on both -> best 0.0 at a (first on a tie)
    assert [s.sentence for s in r.sentences] == [
        "Paris is the capital of France.", "Berlin is in Spain.", "It rains!"]
    assert [s.best for s in r.sentences] == [1.0, 0.5, 0.0]
    assert [s.best_context for s in r.sentences] == [0, 1, 0]
    assert [s.entailed for s in r.sentences] == [True, True, False]
    assert r.value == pytest.approx(2 / 3)
    assert (r.entailed, r.threshold, r.scorer, r.plumbing_only) == (2, 0.5, "containment", False)
    assert DEFAULT_ENTAILMENT_THRESHOLD == 0.5
    assert len(scorer.calls) == 6  # 3 sentences x 2 passages
    assert scorer.calls[0] == (FRANCE, "Paris is the capital of France.")
    d = r.to_dict()
    assert (d["method"], d["entailed"], d["total"]) == ("nli", 2, 3)


def test_nli_threshold_moves_the_verdict() -> None:
    r = nli_grounding(ANSWER, [FRANCE, GERMANY], Containment(), threshold=0.6)
    assert [s.entailed for s in r.sentences] == [True, False, False]
    assert r.value == pytest.approx(1 / 3)


def test_nli_no_passages_and_no_sentences() -> None:
    r = nli_grounding("Paris is big.", [], Containment())
    assert r.value == 0.0 and r.sentences[0].best_context is None
    assert not r.sentences[0].entailed
    empty = nli_grounding("", [FRANCE], Containment())
    assert empty.value is None and empty.reason == "the answer has no sentences to check"


@pytest.mark.parametrize("threshold", [-0.1, 1.5, math.nan, "0.5", True])
def test_nli_threshold_is_validated(threshold: object) -> None:
    with pytest.raises(InputError, match="the entailment threshold must be a number in"):
        nli_grounding("Paris.", [FRANCE], Containment(), threshold=threshold)  # type: ignore[arg-type]


class Broken:
    def __init__(self, value: object) -> None:
        self.value = value

    def entailment(self, premise: str, hypothesis: str) -> float:
        return self.value  # type: ignore[return-value]


@pytest.mark.parametrize("value", [1.5, -0.2, math.nan, "high"])
def test_nli_scorer_output_is_validated(value: object) -> None:
    with pytest.raises(InputError, match="entailment scorer 'Broken' must return a probability"):
        nli_grounding("Paris.", [FRANCE], Broken(value))


def test_nli_refuses_a_non_scorer() -> None:
    with pytest.raises(TypeError, match="needs an entailment"):
        nli_grounding("Paris.", [FRANCE], object())  # type: ignore[arg-type]


# ---------------------------------------------------------------- NLI, tiny local model

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "paris", "is", "the", "capital", "of",
         "france", "berlin", "in", "spain", "."]


def _tiny_model(root: Path, id2label: dict[int, str]) -> Path:
    """A randomly initialised 2-layer BERT classifier and a hand-written WordPiece vocab."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    out = root / "tiny-nli"
    transformers.BertTokenizer(str(root / "vocab.txt")).save_pretrained(str(out))
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=64, num_labels=len(id2label),
        id2label=id2label, label2id={v: k for k, v in id2label.items()})
    transformers.BertForSequenceClassification(config).save_pretrained(str(out))
    return out


NLI_LABELS = {0: "contradiction", 1: "ENTAILMENT", 2: "neutral"}


def test_transformers_scorer_plumbing_only(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Plumbing only: a random model's numbers mean nothing; the wiring and the stamp do."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    model_dir = _tiny_model(tmp_path, NLI_LABELS)
    scorer = TransformersNLIScorer(model_dir, plumbing_only=True)
    assert scorer.index == 1  # found from id2label, case-insensitively
    assert scorer.name == "transformers:tiny-nli"
    p = scorer.entailment(FRANCE, "Paris is the capital.")
    assert 0.0 <= p <= 1.0
    assert scorer.entailment(FRANCE, "Paris is the capital.") == p  # eval mode: deterministic
    # the probability is the softmax at the entailment class of the pair's logits
    import torch
    batch = scorer._tokenizer(FRANCE, "Paris is the capital.", return_tensors="pt")
    with torch.no_grad():
        logits = scorer._model(**batch).logits[0].double()
    assert p == pytest.approx(float(torch.softmax(logits, -1)[1]), abs=1e-12)
    r = nli_grounding("Paris is the capital. Berlin is in Spain.", [FRANCE, GERMANY], scorer)
    assert r.plumbing_only is True and r.to_dict()["plumbing_only"] is True
    assert r.scorer == "transformers:tiny-nli" and len(r.sentences) == 2
    assert r.value in (0.0, 0.5, 1.0)


def test_transformers_scorer_needs_an_entailment_label(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model_dir = _tiny_model(tmp_path, {0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ConfigError, match=r"expected exactly one entailment class .*"
                                          r"\{0: 'LABEL_0', 1: 'LABEL_1'\}"):
        TransformersNLIScorer(model_dir)
    assert TransformersNLIScorer(model_dir, entailment_label="LABEL_1").index == 1
    with pytest.raises(ConfigError, match="'nope'"):
        TransformersNLIScorer(model_dir, entailment_label="nope")


def test_transformers_scorer_refuses_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist or is not a directory"):
        TransformersNLIScorer(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    pytest.importorskip("transformers")
    with pytest.raises(InputError, match="cannot load an NLI model"):
        TransformersNLIScorer(tmp_path / "empty")
