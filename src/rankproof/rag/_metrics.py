"""Answer metrics: exact match, token-F1, ROUGE-L and sentence BLEU, and their registrations.

Each metric compares one generated answer with one or more reference answers
and takes the most favourable reference, because a question with several
acceptable answers is answered correctly by any one of them. The numbers are
meant to equal what the reference implementations print, so that a figure
from rankproof can sit next to a figure from a paper:

* ``exact_match`` and ``token_f1`` — the SQuAD v1.1 evaluation script
  (Rajpurkar et al., 2016): both texts go through `normalize_answer`; F1 is
  the harmonic mean of token precision and recall over the multiset of
  shared tokens. As in that script, F1 is 0 whenever no token is shared —
  including an answer and a reference that both normalise to nothing
  (``"The."`` against ``"a"``), which exact match nevertheless counts as a
  match.
* ``rouge_l`` — ROUGE-L F-measure (Lin, 2004) as Google's ``rouge-score``
  package computes it with its default tokenizer: lower-case, every run of
  characters outside ``[a-z0-9]`` becomes a separator, and (only when
  ``stemmer=True``) tokens longer than three characters are Porter-stemmed
  with NLTK's stemmer, the one ``rouge-score`` uses. An empty side scores 0.
* ``bleu`` — sentence BLEU (Papineni et al., 2002) exactly as
  ``sacrebleu.sentence_bleu(answer, references)`` computes it with its
  defaults, divided by 100: the ``13a`` tokenizer of mteval-v13a, case kept,
  n-grams up to 4 clipped by their largest count in any one reference, the
  reference length closest to the answer's (the shorter on a tie) for the
  brevity penalty, exponential smoothing (the k-th order *without* a match
  gets precision ``1 / (2^k · total)``), and *effective order*: orders the
  answer is too short to have are left out of the geometric mean. All
  references count together, not one at a time. The one departure: a
  perfect answer scores 1.0, where sacrebleu's arithmetic in percent gives
  ``1.0000000000000004``.

The functions here are pure and refuse an empty reference list with
`InputError`: a question without a reference answer cannot be scored, and
what to do with such questions is the caller's decision, not a silent 0.

Registered per-case metrics (`rankproof.measures.register_metric`, higher
is better): ``exact_match``, ``token_f1``, ``rouge_l`` (unstemmed) and
``bleu``. They read a `rankproof.targets.TargetResponse` and its
`rankproof.targets.Case` through `rag_inputs`: the answer is
``response.text``, the references ``case.meta["references"]``.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rankproof._errors import InputError, MissingExtraError
from rankproof.measures import register_metric
from rankproof.rag._answers import Context
from rankproof.rag._text import normalize_answer, strip_citations, tokens

if TYPE_CHECKING:
    from rankproof.targets import Case, TargetResponse

#: Highest n-gram order of BLEU (sacrebleu's default).
BLEU_MAX_ORDER = 4

RagInputs = tuple[str, tuple[Context, ...], tuple[str, ...] | None, str,
                  tuple[int | str, ...] | None]
"""``(answer, contexts, references, query, citations)`` as `rag_inputs` returns them."""


# --------------------------------------------------------------------------- validation

def _check_answer(answer: object) -> str:
    if not isinstance(answer, str):
        raise TypeError(f"the answer must be a string, got {type(answer).__name__}")
    return answer


def _check_references(references: object) -> tuple[str, ...]:
    """A non-empty tuple of strings; a bare string is refused (it would be read letter by
    letter)."""
    if isinstance(references, str | bytes) or not isinstance(references, Sequence):
        raise TypeError("references must be a list of strings, got "
                        f"{type(references).__name__}")
    refs = tuple(references)
    for i, ref in enumerate(refs):
        if not isinstance(ref, str):
            raise TypeError(f"reference {i + 1} must be a string, got {type(ref).__name__}")
    if not refs:
        raise InputError("no reference answer: a question without one cannot be scored "
                         "(leave it out, or score it with a metric that needs no reference)",
                         field="references")
    return refs


def _inputs(answer: object, references: object, strip: bool) -> tuple[str, tuple[str, ...]]:
    """The answer and references, validated, without citation markers when ``strip``
    (`rankproof.rag._text.strip_citations`: the first step of the answer normalisation)."""
    text, refs = _check_answer(answer), _check_references(references)
    if not strip:
        return text, refs
    return strip_citations(text), tuple(strip_citations(r) for r in refs)


# --------------------------------------------------------------------------- SQuAD

def exact_match(answer: str, references: Sequence[str], *,
                strip_citations: bool = True) -> float:
    """1.0 when the answer equals some reference after SQuAD normalisation, else 0.0.

    Citation markers (``[1]``) are removed first unless ``strip_citations=False``.

    >>> exact_match("The Eiffel Tower!", ["eiffel tower", "la tour Eiffel"])
    1.0
    >>> exact_match("42 MLD [1]", ["42 MLD"]), exact_match("42 MLD [1]", ["42 MLD"],
    ...                                                    strip_citations=False)
    (1.0, 0.0)
    """
    answer, refs = _inputs(answer, references, strip_citations)
    text = normalize_answer(answer)
    return float(any(text == normalize_answer(r) for r in refs))


def _f1(answer_tokens: list[str], reference_tokens: list[str]) -> float:
    shared = sum((Counter(answer_tokens) & Counter(reference_tokens)).values())
    if shared == 0:
        return 0.0
    precision = shared / len(answer_tokens)
    recall = shared / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(answer: str, references: Sequence[str], *,
             strip_citations: bool = True) -> float:
    """SQuAD token-F1 of the answer against its best reference (0 when nothing is shared).

    Citation markers are removed first unless ``strip_citations=False``.

    >>> round(token_f1("in Paris, France [2]", ["Paris"]), 4)   # P = 1/3, R = 1
    0.5
    """
    answer, refs = _inputs(answer, references, strip_citations)
    answer_tokens = tokens(answer)
    return max(_f1(answer_tokens, tokens(r)) for r in refs)


# --------------------------------------------------------------------------- ROUGE-L

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


@functools.lru_cache(maxsize=1)
def _porter() -> Callable[[str], str]:
    """NLTK's Porter stemmer (its default mode, as rouge-score builds it), loaded on first use."""
    try:
        module = importlib.import_module("nltk.stem.porter")
    except ImportError as exc:
        raise MissingExtraError(
            "rouge_l(stemmer=True) stems with NLTK's Porter stemmer, as rouge-score does, and "
            "nltk is not installed: pip install nltk") from exc
    stem: Callable[[str], str] = module.PorterStemmer().stem
    return stem


def rouge_tokens(text: str, *, stemmer: bool = False) -> list[str]:
    """Tokens as rouge-score's default tokenizer makes them.

    Lower-cased first (Python's full Unicode lower-casing), then every run of
    characters other than ASCII letters and digits separates tokens, so
    ``"U.S.-born"`` gives ``["u", "s", "born"]`` and accented letters split
    words. With ``stemmer``, tokens longer than three characters are stemmed.

    >>> rouge_tokens("It's 3:15 -- the U.S. Café")
    ['it', 's', '3', '15', 'the', 'u', 's', 'caf']
    """
    words = _NOT_ALNUM.sub(" ", _check_answer(text).lower()).split()
    if stemmer:
        stem = _porter()
        words = [stem(w) if len(w) > 3 else w for w in words]
    return words


def _lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (dynamic programming, one row kept)."""
    if len(b) > len(a):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def _lcs_f(answer_tokens: list[str], reference_tokens: list[str]) -> float:
    if not answer_tokens or not reference_tokens:
        return 0.0
    lcs = _lcs_length(reference_tokens, answer_tokens)
    precision = lcs / len(answer_tokens)
    recall = lcs / len(reference_tokens)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def rouge_l(answer: str, references: Sequence[str], *, stemmer: bool = False,
            strip_citations: bool = True) -> float:
    """ROUGE-L F-measure against the best reference, as rouge-score computes it.

    ``stemmer=True`` needs nltk (`MissingExtraError` otherwise). Citation markers
    are removed first unless ``strip_citations=False``.

    >>> round(rouge_l("the cat sat on the mat", ["the cat lay on a mat"]), 4)  # LCS 4 of 6
    0.6667
    """
    answer, refs = _inputs(answer, references, strip_citations)
    answer_tokens = rouge_tokens(answer, stemmer=stemmer)
    return max(_lcs_f(answer_tokens, rouge_tokens(r, stemmer=stemmer)) for r in refs)


# --------------------------------------------------------------------------- BLEU

# mteval-v13a's tokenisation, step by step (sacrebleu's "13a").
# 1. ASCII symbols that always stand alone: space to '&', '(' to '+', '/', ':' to '@',
#    '[' to '`', '{' to '~' -- every printable ASCII non-alphanumeric except the
#    apostrophe, comma, hyphen and period, which the rules below handle.
_ALWAYS_SPLIT = re.compile(r"([ -&(-+/:-@\[-`{-~])")
# 2. A period or comma is split off unless it sits between digits ("3.14", "1,000"):
#    first when a non-digit precedes it, then when a non-digit follows it.
_AFTER_NON_DIGIT = re.compile(r"([^0-9])([.,])")
_BEFORE_NON_DIGIT = re.compile(r"([.,])([^0-9])")
# 3. A hyphen right after a digit is split off ("1990-91" -> "1990 - 91").
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")
_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))


def bleu_tokens(text: str) -> list[str]:
    """Tokens as sacrebleu's default ``13a`` tokenizer makes them (case kept).

    Trailing whitespace is dropped, ``<skipped>`` markers removed, a hyphen at
    a line end joins the lines, the four XML entities are decoded, then
    punctuation is split off by the rules above.

    >>> bleu_tokens("It costs $3.50, (approx.) in 1990-91.")
    ['It', 'costs', '$', '3.50', ',', '(', 'approx', '.', ')', 'in', '1990', '-', '91', '.']
    """
    line = _check_answer(text).rstrip()
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for entity, char in _ENTITIES:
            line = line.replace(entity, char)
    line = _ALWAYS_SPLIT.sub(r" \1 ", f" {line} ")
    line = _AFTER_NON_DIGIT.sub(r"\1 \2 ", line)
    line = _BEFORE_NON_DIGIT.sub(r" \1 \2", line)
    line = _DASH_AFTER_DIGIT.sub(r"\1 \2 ", line)
    return line.split()


def _ngrams(words: Sequence[str]) -> Counter[tuple[str, ...]]:
    counts: Counter[tuple[str, ...]] = Counter()
    for n in range(1, BLEU_MAX_ORDER + 1):
        counts.update(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
    return counts


def _closest_length(length: int, candidates: Sequence[int]) -> int:
    """The reference length nearest the answer's; the shorter one on a tie (as sacrebleu)."""
    return min(candidates, key=lambda c: (abs(length - c), c))


def bleu(answer: str, references: Sequence[str], *, strip_citations: bool = True) -> float:
    """Sentence BLEU in [0, 1]: ``sacrebleu.sentence_bleu(answer, references).score / 100``
    (on the texts without citation markers unless ``strip_citations=False``).

    >>> round(bleu("the cat sat on the mat", ["the cat sat on a mat"]), 6)
    0.537285
    """
    answer, refs = _inputs(answer, references, strip_citations)
    hyp = bleu_tokens(answer)
    ref_tokens = [bleu_tokens(r) for r in refs]
    clip: dict[tuple[str, ...], int] = {}
    for words in ref_tokens:
        for gram, count in _ngrams(words).items():
            clip[gram] = max(clip.get(gram, 0), count)
    matched = [0] * BLEU_MAX_ORDER
    total = [0] * BLEU_MAX_ORDER
    for gram, count in _ngrams(hyp).items():
        total[len(gram) - 1] += count
        matched[len(gram) - 1] += min(count, clip.get(gram, 0))
    if not any(matched):
        return 0.0
    ref_len = _closest_length(len(hyp), [len(w) for w in ref_tokens])
    brevity = 1.0 if len(hyp) >= ref_len else math.exp(1 - ref_len / len(hyp))
    log_precisions = []
    unmatched_orders = 1.0
    for n in range(BLEU_MAX_ORDER):
        if total[n] == 0:      # effective order: the answer is too short for this order
            break
        if matched[n] == 0:    # exponential smoothing: 1/2, 1/4, ... of one match
            unmatched_orders *= 2
            percent = 100.0 / (unmatched_orders * total[n])
        else:
            percent = 100.0 * matched[n] / total[n]
        log_precisions.append(math.log(percent))
    # sacrebleu works in percent and so do we, to keep its rounding; exp(log(100)) is a hair
    # above 100, so a perfect answer would score 1.0000000000000004 without the clamp
    return min(1.0, brevity * math.exp(sum(log_precisions) / len(log_precisions)) / 100.0)


# --------------------------------------------------------------------------- registry adapters

def _where(case: Case) -> str:
    return f"case {case.id!r}"


def _contexts_of(value: Any, case: Case) -> tuple[Context, ...]:
    if value is None:
        return ()
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise InputError(f"{_where(case)}: response.meta['contexts'] must be a list of "
                         f"{{id, text}} objects, got {type(value).__name__}",
                         field="meta.contexts")
    out: list[Context] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        fld = f"meta.contexts[{i}]"
        cid: Any
        text: Any
        if isinstance(item, Context):
            cid, text = item.id, item.text
        elif isinstance(item, Mapping):
            cid, text = item.get("id"), item.get("text")
        else:
            raise InputError(f"{_where(case)}: each shown passage is an {{id, text}} object, "
                             f"got {type(item).__name__}", field=fld)
        if not isinstance(cid, str) or not cid:
            raise InputError(f"{_where(case)}: a passage id must be a non-empty string, "
                             f"got {cid!r}", field=f"{fld}.id")
        if not isinstance(text, str):
            raise InputError(f"{_where(case)}: passage {cid!r} text must be a string, got "
                             f"{type(text).__name__}", field=f"{fld}.text")
        if cid in seen:
            raise InputError(f"{_where(case)}: passage {cid!r} is shown twice",
                             field=f"{fld}.id")
        seen.add(cid)
        out.append(item if isinstance(item, Context) else Context(cid, text))
    return tuple(out)


def _references_of(value: Any, case: Case) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InputError(f"{_where(case)}: case.meta['references'] must be a list of "
                         f"answers, got {type(value).__name__}", field="meta.references")
    for i, ref in enumerate(value):
        if not isinstance(ref, str) or not ref.strip():
            raise InputError(f"{_where(case)}: reference {i + 1} must be a non-empty string, "
                             f"got {ref!r}", field="meta.references")
    return tuple(value)


def _citations_of(value: Any, case: Case) -> tuple[int | str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InputError(f"{_where(case)}: response.meta['citations'] must be a list of "
                         f"passage numbers or ids, got {type(value).__name__}",
                         field="meta.citations")
    for c in value:
        if isinstance(c, bool) or not isinstance(c, int | str) or c == "":
            raise InputError(f"{_where(case)}: a citation is a passage number (1-based) or a "
                             f"passage id, got {c!r}", field="meta.citations")
    return tuple(value)


def rag_inputs(response: TargetResponse, case: Case) -> RagInputs:
    """``(answer, contexts, references, query, citations)`` of one case, validated.

    The RAG convention for the one metric registry: the answer is
    ``response.text``; the passages shown to the generator are
    ``response.meta["contexts"]`` (a list of ``{"id", "text"}`` objects or
    `Context` values, in the order shown; other keys such as a score are
    ignored; absent means none were shown); the declared citations are
    ``response.meta["citations"]`` (None when absent, so that ``[N]`` markers
    in the answer can be read instead); the reference answers are
    ``case.meta["references"]`` (None when absent, ``()`` for a question
    declared to have no answer); the query is ``case.query``.

    A response without text is refused rather than scored as an empty answer:
    it usually means the target's text field is misconfigured. Every problem
    is an `InputError` naming the case and the field.
    """
    if response.text is None:
        raise InputError(f"{_where(case)}: the response has no text, so there is no answer "
                         "to score (is the target's text field configured?)", field="text")
    return (response.text,
            _contexts_of(response.meta.get("contexts"), case),
            _references_of(case.meta.get("references"), case),
            case.query,
            _citations_of(response.meta.get("citations"), case))


def _needs_references(name: str, fn: Callable[..., float]
                      ) -> Callable[[TargetResponse, Case], float]:
    """A registry adapter: the metric over ``(response.text, case.meta['references'])``,
    citation markers stripped unless ``case.meta['strip_citations']`` is False (what
    `rankproof.rag.score_answers` sets for ``strip_citations=False``)."""

    def metric(response: TargetResponse, case: Case) -> float:
        answer, _, references, _, _ = rag_inputs(response, case)
        if references is None:
            raise InputError(f"{_where(case)}: {name} compares the answer with reference "
                             "answers, and case.meta has no 'references'",
                             field="meta.references")
        if not references:
            raise InputError(f"{_where(case)}: {name} cannot score a question declared to have "
                             "no answer (empty 'references')", field="meta.references")
        strip = case.meta.get("strip_citations", True)
        if not isinstance(strip, bool):
            raise InputError(f"{_where(case)}: case.meta['strip_citations'] must be true or "
                             f"false, got {strip!r}", field="meta.strip_citations")
        return fn(answer, references, strip_citations=strip)

    metric.__name__ = name
    metric.__qualname__ = name
    metric.__doc__ = (fn.__doc__ or "").strip().splitlines()[0]
    return metric


for _name, _fn in (("exact_match", exact_match), ("token_f1", token_f1),
                   ("rouge_l", rouge_l), ("bleu", bleu)):
    register_metric(_name, _needs_references(_name, _fn), higher_is_better=True)
del _name, _fn
