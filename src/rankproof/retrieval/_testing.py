"""A tiny randomly initialised cross-encoder, for exercising the rerank path offline.

Its scores are meaningless: the directory's ``config.json`` carries
``"rankproof_plumbing_only": true``, so `SentenceTransformerCrossEncoder`
stamps every output with the plumbing-only caveat.
"""

from __future__ import annotations

import importlib
import inspect
import os
import string
from pathlib import Path
from typing import Any

import numpy as np

from rankproof.retrieval._embed import hub_offline, import_sentence_transformers
from rankproof.retrieval._rerank import PLUMBING_MARKER

_WORDS = ("the", "of", "and", "to", "in", "is", "for", "on", "with", "what", "how", "query",
          "document", "search", "retrieval", "cat", "dog", "fox", "bird", "fish", "water",
          "river", "mountain", "city", "music", "computer", "science", "history")


def make_plumbing_cross_encoder(path: str | os.PathLike[str], *, seed: int = 0,
                                layers: int = 2, hidden: int = 32) -> Path:
    """Write a ``BertForSequenceClassification`` (one label) with random weights to ``path``.

    A WordPiece vocabulary of special tokens, letters and digits (and their
    ``##`` continuations), punctuation and a few common words; weights drawn from
    ``numpy.random.default_rng(seed)`` so the model is the same on every
    machine. Needs the ``dense`` extra. Returns the directory.
    """
    import_sentence_transformers("make_plumbing_cross_encoder")
    transformers: Any = importlib.import_module("transformers")

    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    chars = string.ascii_lowercase + string.digits
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars),
             *string.punctuation, *_WORDS]
    vocab_file = out / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    config = transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=512,
        num_labels=1, **{PLUMBING_MARKER: True},
    )
    with hub_offline():
        model = transformers.BertForSequenceClassification(config)
        rng = np.random.default_rng(seed)
        import torch

        with torch.no_grad():
            for pname, param in sorted(model.named_parameters()):
                shape = tuple(param.shape)
                if "LayerNorm" in pname and pname.endswith("weight"):
                    values = 1.0 + rng.normal(0.0, 0.05, size=shape)
                elif pname.endswith("bias"):
                    values = rng.normal(0.0, 0.02, size=shape)
                else:  # large enough that different texts get clearly different scores
                    values = rng.normal(0.0, 0.5, size=shape)
                param.copy_(torch.from_numpy(values.astype(np.float32)))
        model.save_pretrained(str(out))
        tokenizer_cls = transformers.BertTokenizerFast
        # transformers 5 takes the vocabulary itself (``vocab``); 4.x takes ``vocab_file``.
        if "vocab" in inspect.signature(tokenizer_cls.__init__).parameters:
            source: dict[str, Any] = {"vocab": {tok: i for i, tok in enumerate(vocab)}}
        else:
            source = {"vocab_file": str(vocab_file)}
        tokenizer = tokenizer_cls(**source, do_lower_case=True, model_max_length=512)
        tokenizer.save_pretrained(str(out))
    return out
