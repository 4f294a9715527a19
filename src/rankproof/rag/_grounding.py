"""Grounding: how much of an answer is supported by the passages the generator was shown.

Three readings, weakest to strongest, each reported with the method that
produced it:

Citation markers (``[N]``, ``[N, M]``) are removed from the answer first.

* **lexical content-token grounding** — the share of the answer's content
  tokens (`rankproof.rag._text.content_tokens`: SQuAD-normalised tokens minus
  the one documented stop-word list) that occur anywhere in the shown
  passages' tokens. Counted per occurrence: an answer that repeats an
  unsupported word five times is penalised five times. Stop words are left
  out so that "the", "of" and "is" cannot make an answer look grounded;
* **n-gram grounding** (n = 2, 3, 4) — the share of the answer's token
  n-grams (SQuAD tokens *with* stop words, because word order and function
  words are what separates a copied phrase from a bag of words) that occur in
  some *single* shown passage (an n-gram may not straddle two passages). An
  answer shorter than n tokens is read as one gram, its whole token
  sequence, so a one-word answer copied from a passage is grounded at every
  n rather than unscorable;
* **NLI entailment** — the answer is split into sentences (`split_sentences`),
  each sentence is *entailed* when some shown passage entails it with
  probability at least ``threshold`` (default 0.5) under an injected
  `EntailmentScorer`, and groundedness is the share of entailed sentences.
  `TransformersNLIScorer` adapts a local sequence-classification model
  directory; nothing is ever downloaded.

**Not scorable.** An answer with nothing to check (no content tokens, no
tokens, no sentences — e.g. an empty answer or "No.") gets ``value=None`` and
a ``reason``, never a vacuous 1.0: an arm must not become "perfectly grounded"
by saying nothing. (The registered per-case metrics, which must return a
number, score such a case 0.0; see `rankproof.rag._triad`.)
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rankproof._errors import ConfigError, InputError, MissingExtraError
from rankproof._io import PathLike
from rankproof.rag._text import CITATION_MARKER, content_tokens, squash_whitespace, tokens

NGRAM_ORDERS: tuple[int, ...] = (2, 3, 4)
DEFAULT_ENTAILMENT_THRESHOLD = 0.5

#: A sentence ends at ., ! or ? (optionally followed by one closing quote or bracket)
#: followed by whitespace, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"'”’)\]])\s+|\n+")


@dataclass(frozen=True)
class GroundingScore:
    """One grounding reading of one answer.

    ``value`` = ``matched / total`` or None when ``total`` is 0 (``reason``
    then says why). ``method`` is ``"lexical"`` or ``"ngram-<n>"``.
    ``unsupported`` lists the tokens (or n-grams, space-joined) not found,
    in answer order, repeats kept.
    """

    value: float | None
    matched: int
    total: int
    method: str
    unsupported: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def scorable(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "matched": self.matched, "total": self.total,
                "method": self.method, "unsupported": list(self.unsupported),
                "reason": self.reason}


def _texts(contexts: Sequence[Any]) -> list[str]:
    """Passage texts from `Context` objects or plain strings."""
    out: list[str] = []
    for c in contexts:
        text = c if isinstance(c, str) else getattr(c, "text", None)
        if not isinstance(text, str):
            raise InputError(f"a context must be a string or have a text, got {type(c).__name__}",
                             field="contexts")
        out.append(text)
    return out


def lexical_grounding(answer: str, contexts: Sequence[Any]) -> GroundingScore:
    """Share of the answer's content tokens that occur in the shown passages' tokens.

    >>> lexical_grounding("Paris is the capital", ["The capital of France is Paris."]).value
    1.0
    """
    wanted = content_tokens(strip_markers(answer))
    if not wanted:
        return GroundingScore(None, 0, 0, "lexical",
                              reason="the answer has no content tokens to check")
    shown: set[str] = set()
    for text in _texts(contexts):
        shown.update(tokens(text))
    missing = tuple(t for t in wanted if t not in shown)
    matched = len(wanted) - len(missing)
    return GroundingScore(matched / len(wanted), matched, len(wanted), "lexical", missing)


def strip_markers(answer: str) -> str:
    """The answer without its ``[N]`` / ``[N, M]`` citation markers.

    >>> strip_markers("Paris [1][2]. Rome [3, 4].")
    'Paris. Rome.'
    """
    # A bracketed number is not part of the claim (and "[1][7]" would otherwise
    # become the token "17"), so grounding reads the answer without its markers.
    return CITATION_MARKER.sub("", answer)


def _grams(toks: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)]


def ngram_grounding(answer: str, contexts: Sequence[Any], n: int) -> GroundingScore:
    """Share of the answer's token n-grams found inside one shown passage.

    Tokens are SQuAD tokens including stop words. An answer of fewer than
    ``n`` tokens is one gram (its whole token sequence), looked up as a
    contiguous run in some passage.

    >>> ngram_grounding("capital of France", ["The capital of France is Paris."], 2).value
    1.0
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"the n-gram order must be an integer >= 1, got {n!r}", field="n")
    toks = tokens(strip_markers(answer))
    method = f"ngram-{n}"
    if not toks:
        return GroundingScore(None, 0, 0, method, reason="the answer has no tokens to check")
    size = min(n, len(toks))
    wanted = _grams(toks, size)
    passages = [set(_grams(tokens(text), size)) for text in _texts(contexts)]
    missing = tuple(" ".join(g) for g in wanted if not any(g in p for p in passages))
    matched = len(wanted) - len(missing)
    return GroundingScore(matched / len(wanted), matched, len(wanted), method, missing)


def ngram_groundings(answer: str, contexts: Sequence[Any],
                     orders: Sequence[int] = NGRAM_ORDERS) -> dict[int, GroundingScore]:
    """`ngram_grounding` for each order in ``orders`` (default 2, 3, 4), keyed by n."""
    return {n: ngram_grounding(answer, contexts, n) for n in orders}


# --------------------------------------------------------------------------- NLI


@runtime_checkable
class EntailmentScorer(Protocol):
    """Anything that says how likely ``premise`` entails ``hypothesis``.

    ``entailment`` returns a probability in [0, 1]. A scorer may carry a
    ``name`` (recorded in results) and ``plumbing_only = True`` when its
    numbers mean nothing (a randomly initialised test model): results are
    then stamped plumbing-only so nobody reads them as evidence.
    """

    def entailment(self, premise: str, hypothesis: str) -> float: ...


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences: the simple, documented rule NLI grounding uses.

    A sentence ends at ``.``, ``!`` or ``?`` (with at most one closing quote
    or bracket right after it) followed by whitespace, or at a line break.
    Pieces are whitespace-squashed; empty pieces and pieces with no letter or
    digit are dropped. No abbreviation list: "e.g. this" splits after "e.g.",
    which costs NLI a fragment, not a wrong verdict on the rest.

    >>> split_sentences("Paris is big. It is old!  Why?")
    ['Paris is big.', 'It is old!', 'Why?']
    """
    pieces = (squash_whitespace(p) for p in _SENTENCE_END.split(text))
    return [p for p in pieces if any(ch.isalnum() for ch in p)]


@dataclass(frozen=True)
class SentenceEntailment:
    """One answer sentence: its best entailment probability over the shown passages.

    ``best_context`` is the 0-based index of the passage that gave ``best``
    (the first one on a tie); None when no passage was shown.
    """

    sentence: str
    best: float
    best_context: int | None
    entailed: bool

    def to_dict(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "best": self.best,
                "best_context": self.best_context, "entailed": self.entailed}


@dataclass(frozen=True)
class NLIGrounding:
    """NLI groundedness of one answer: the share of its sentences some passage entails.

    ``plumbing_only`` is True when the scorer said its numbers are
    meaningless (a test model): the value checks wiring, not the answer.
    """

    value: float | None
    sentences: tuple[SentenceEntailment, ...]
    threshold: float
    scorer: str
    plumbing_only: bool = False
    reason: str | None = None
    method: str = "nli"

    @property
    def entailed(self) -> int:
        return sum(s.entailed for s in self.sentences)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "method": self.method, "threshold": self.threshold,
                "scorer": self.scorer, "plumbing_only": self.plumbing_only,
                "entailed": self.entailed, "total": len(self.sentences),
                "sentences": [s.to_dict() for s in self.sentences], "reason": self.reason}


def _check_threshold(threshold: object) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) \
            or not math.isfinite(threshold) or not 0.0 <= threshold <= 1.0:
        raise InputError(f"the entailment threshold must be a number in [0, 1], "
                         f"got {threshold!r}", field="threshold")
    return float(threshold)


def _probability(value: object, scorer: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InputError(f"entailment scorer {scorer!r} must return a probability in [0, 1], "
                         f"got {value!r}", field="entailment")
    return float(value)


def scorer_name(scorer: EntailmentScorer) -> str:
    """The scorer's ``name`` attribute, or its class name."""
    name = getattr(scorer, "name", None)
    return name if isinstance(name, str) and name else type(scorer).__name__


def nli_grounding(answer: str, contexts: Sequence[Any], scorer: EntailmentScorer, *,
                  threshold: float = DEFAULT_ENTAILMENT_THRESHOLD) -> NLIGrounding:
    """Share of the answer's sentences entailed (max over passages >= ``threshold``).

    Each sentence, with ``[N]`` citation markers removed, is the hypothesis;
    each shown passage in turn is the premise. With no passages shown no
    sentence can be entailed (value 0.0 when there are sentences). An answer
    with no sentences is not scorable (value None).
    """
    threshold = _check_threshold(threshold)
    if not callable(getattr(scorer, "entailment", None)):
        raise TypeError(f"an entailment scorer needs an entailment(premise, hypothesis) "
                        f"method, got {type(scorer).__name__}")
    name = scorer_name(scorer)
    plumbing = getattr(scorer, "plumbing_only", False) is True
    premises = _texts(contexts)
    sentences = [s for s in (squash_whitespace(strip_markers(s))
                             for s in split_sentences(answer)) if any(c.isalnum() for c in s)]
    if not sentences:
        return NLIGrounding(None, (), threshold, name, plumbing,
                            reason="the answer has no sentences to check")
    judged: list[SentenceEntailment] = []
    for sentence in sentences:
        best, where = 0.0, None
        for i, premise in enumerate(premises):
            p = _probability(scorer.entailment(premise, sentence), name)
            if where is None or p > best:
                best, where = p, i
        judged.append(SentenceEntailment(sentence, best, where,
                                         where is not None and best >= threshold))
    share = sum(s.entailed for s in judged) / len(judged)
    return NLIGrounding(share, tuple(judged), threshold, name, plumbing)


class TransformersNLIScorer:
    """An `EntailmentScorer` over a LOCAL sequence-classification model directory.

    Loads with ``transformers`` (``AutoTokenizer`` and
    ``AutoModelForSequenceClassification``, ``local_files_only=True``: no
    network, ever) on CPU. The entailment class is read from the model
    config's ``id2label`` (the label whose name starts with "entail",
    case-insensitively) unless ``entailment_label`` names it; a model without
    one is refused rather than guessed. The probability is the softmax of the
    logits at that class for the pair (premise, hypothesis), truncated to
    ``max_length`` tokens.

    ``plumbing_only=True`` marks a model whose outputs are meaningless (the
    tests' randomly initialised model); results carry the stamp.
    """

    def __init__(self, model_dir: PathLike, *, entailment_label: str | None = None,
                 max_length: int = 512, plumbing_only: bool = False) -> None:
        path = Path(model_dir)
        if not path.is_dir():
            raise InputError(f"NLI model directory {str(path)!r} does not exist or is not a "
                             "directory (models are never downloaded)", path=str(path))
        try:
            self._torch: Any = importlib.import_module("torch")
            tf: Any = importlib.import_module("transformers")
        except ImportError as exc:
            raise MissingExtraError(f"TransformersNLIScorer needs torch and transformers "
                                    f"({exc}): pip install 'rankproof[dense]' transformers") \
                from None
        try:
            self._tokenizer = tf.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            self._model = tf.AutoModelForSequenceClassification.from_pretrained(
                str(path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot load an NLI model from {str(path)!r}: {exc}",
                             path=str(path)) from None
        self._model.eval()
        id2label = {int(k): str(v) for k, v in dict(self._model.config.id2label).items()}
        self.index = self._entailment_index(id2label, entailment_label, str(path))
        self.labels = id2label
        self.max_length = int(max_length)
        self.plumbing_only = bool(plumbing_only)
        self.name = f"transformers:{path.name}"

    @staticmethod
    def _entailment_index(id2label: dict[int, str], wanted: str | None, where: str) -> int:
        if wanted is not None:
            hits = [i for i, lab in id2label.items() if lab == wanted]
        else:
            hits = [i for i, lab in id2label.items() if lab.lower().startswith("entail")]
        if len(hits) != 1:
            shown = ", ".join(f"{i}: {lab!r}" for i, lab in sorted(id2label.items()))
            asked = repr(wanted) if wanted is not None else "a label starting with 'entail'"
            raise ConfigError(f"NLI model {where!r}: expected exactly one entailment class "
                              f"({asked}) in config id2label, found {{{shown}}}; pass "
                              "entailment_label=")
        return hits[0]

    def entailment(self, premise: str, hypothesis: str) -> float:
        """P(entailment) for the pair, from the model's softmax."""
        batch = self._tokenizer(premise, hypothesis, truncation=True,
                                max_length=self.max_length, return_tensors="pt")
        with self._torch.no_grad():
            logits = self._model(**batch).logits[0]
        probs = self._torch.softmax(logits.double(), dim=-1)
        return float(probs[self.index].item())
