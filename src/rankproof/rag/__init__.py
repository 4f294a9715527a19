"""RAG answers: answer metrics, grounding, citations, the RAG triad, judges, paired arms.

What a retrieval-augmented system *says*, scored per case and compared arm
against arm with rankproof's statistics. Answer files carry the passages the
generator was shown, so grounding and citations are checked against what it
actually saw.
"""

from rankproof.rag._answers import (
    ARM_FIELDS,
    MANIFEST_KEY,
    AnswerFile,
    AnswerRow,
    ArmManifest,
    Context,
    References,
    aligned,
    load_answers,
    load_references,
)
from rankproof.rag._text import (
    STOP_WORDS,
    content_tokens,
    normalize_answer,
    squash_whitespace,
    tokens,
)

__all__ = [
    "ARM_FIELDS",
    "MANIFEST_KEY",
    "STOP_WORDS",
    "AnswerFile",
    "AnswerRow",
    "ArmManifest",
    "Context",
    "References",
    "aligned",
    "content_tokens",
    "load_answers",
    "load_references",
    "normalize_answer",
    "squash_whitespace",
    "tokens",
]
