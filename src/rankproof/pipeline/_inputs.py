"""What an experiment's stages read: the inputs section, its files, digests and loaded forms.

`check_paths` refuses, before anything runs, every path of the file that is not there
(the inputs', a run file's, a checks file's, a cross-encoder's folder), naming the file,
the line and the field; an ir_datasets id (``inputs.irds``, or ``irds:ID`` as qrels or
topics) is checked the same way: every cached file it needs must be on disk, so that a
dataset ir_datasets would download is refused before anything runs. `Sources` loads the
inputs once per granularity and chunking (the harness's own readers:
`rankproof.harness.collection_inputs` and its siblings), and digests their files once
(`rankproof._manifest.input_entry`), so that every stage's cache key names the content it
read, not only the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankproof._errors import ConfigError, InputError, MissingExtraError
from rankproof._manifest import digest_json, input_entry
from rankproof.comparison import read_queries
from rankproof.corpus import find_adaptation, golden_corpus
from rankproof.data import IRDS_PREFIX, Qrels, irds_files, load_qrels
from rankproof.harness import (
    EvalInputs,
    beir_inputs,
    collection_inputs,
    directory_inputs,
    golden_inputs,
    irds_inputs,
)
from rankproof.pipeline._config import Experiment
from rankproof.pipeline._models import NAMED_FILES


def _source(exp: Experiment, value: str) -> Any:
    """A path from the file, resolved; an ``irds:`` dataset id, as it is (a `Path` whose
    text is ``irds:ID``, which every reader takes for the id)."""
    return exp.resolve(value)


def _problem(exp: Experiment, field_path: str, message: str) -> str:
    line = exp.line(field_path)
    return f"{exp.path}{f', line {line}' if line else ''}, field '{field_path}': {message}"


def check_paths(exp: Experiment) -> None:
    """Refuse (`ConfigError`, every problem at once) a path of the file that is not there."""
    problems: list[str] = []

    def cached(field_path: str, label: str, entities: tuple[Any, ...]) -> None:
        try:
            irds_files(label, entities)
        except (InputError, MissingExtraError) as exc:
            problems.append(_problem(exp, field_path, getattr(exc, "reason", None) or str(exc)))

    def need(field_path: str, value: str | None, folder: bool) -> None:
        if value is not None and value.startswith(IRDS_PREFIX):
            entity = "queries" if field_path == "inputs.topics" else "qrels"
            cached(field_path, value, (entity,))
            return
        if value is None:
            return
        p = exp.resolve(value)
        ok = p.is_dir() if folder else p.is_file()
        if not ok:
            what = "folder" if folder else "file"
            found = " (it is a folder)" if p.is_dir() else (" (it is a file)" if p.exists()
                                                             else "")
            problems.append(_problem(exp, field_path, f"no such {what}: {p}{found}"))

    src = exp.inputs
    need("inputs.corpus", src.corpus, True)
    need("inputs.judgments", src.judgments, False)
    if src.collection is not None:
        root = exp.resolve(src.collection.root)
        if not root.is_dir():
            problems.append(_problem(exp, "inputs.collection.root", f"no such folder: {root}"))
        elif not (root / src.collection.name).is_dir():
            problems.append(_problem(exp, "inputs.collection.name",
                                     f"no folder {src.collection.name!r} in {root}"))
    if src.beir is not None:
        need("inputs.beir.folder", src.beir.folder, True)
    if src.irds_label is not None:
        cached("inputs.irds", src.irds_label, ("docs", "queries", "qrels"))
    for q in [src.qrels] if isinstance(src.qrels, str) else (src.qrels or []):
        need("inputs.qrels", q, False)
    need("inputs.topics", src.topics, False)
    if src.corpus is not None and src.judgments is None and exp.resolve(src.corpus).is_dir() \
            and find_adaptation(exp.resolve(src.corpus)) is None:
        problems.append(_problem(exp, "inputs.corpus", "a corpus folder needs judgments "
                                 "(unless it is a folder written by `rankproof adapt beir`)"))
    folders = {"model", "rerank_model"}
    for s in exp.stages:
        for attr in NAMED_FILES.get(s.kind, ()):
            value = getattr(s, attr, None)
            for i, one in enumerate(value) if isinstance(value, list) else [(None, value)]:
                need(f"stages[{s.id}].{attr}" + ("" if i is None else f"[{i}]"), one,
                     attr in folders)
    if problems:
        head = "1 problem" if len(problems) == 1 else f"{len(problems)} problems"
        raise ConfigError(f"experiment file inputs not found ({head}):\n"
                          + "\n".join(f"  - {p}" for p in problems))


@dataclass
class Sources:
    """The experiment's inputs: their files (for provenance), digests (for cache keys),
    and their loaded forms, each made once."""

    exp: Experiment
    _loaded: dict[tuple[str, int, int], EvalInputs] = field(default_factory=dict)
    _digest: str | None = None
    _qrels: Qrels | None = None

    def files(self) -> dict[str, Any]:
        """Role → path (or list of paths) of every input, for the provenance block."""
        src, r = self.exp.inputs, self.exp.resolve
        if src.collection is not None:
            return {"collection": r(src.collection.root) / src.collection.name}
        if src.beir is not None:
            return {"beir": r(src.beir.folder)}
        if src.irds_label is not None:
            return {"irds": r(src.irds_label)}
        if src.corpus is not None:
            return {"corpus": r(src.corpus),
                    "judgments": r(src.judgments) if src.judgments else None}
        if src.qrels is not None:
            qrels = [src.qrels] if isinstance(src.qrels, str) else src.qrels
            return {"qrels": [_source(self.exp, q) for q in qrels],
                    "topics": _source(self.exp, src.topics) if src.topics else None}
        return {}

    def digest(self) -> str:
        """One digest over the inputs' content and the settings that shape them."""
        if self._digest is None:
            files = self.files()
            if self.exp.inputs.irds_label is not None:  # its cached files, recorded for the
                irds_files(self.exp.inputs.irds_label)  # manifest entry, checked, not read
            if files:
                content: Any = {role: ([input_entry(p)["sha256"] for p in v]
                                       if isinstance(v, list) else input_entry(v)["sha256"])
                                for role, v in files.items() if v is not None}
                if self.exp.inputs.qrels is not None:  # an irds: id has no file to digest
                    content["qrels_content"] = self.qrels().digest
                if content.get("irds", "") is None:  # cache files past the digest bound
                    made = self.load()
                    content["irds"] = [made.corpus.digest, made.judgments_digest,
                                       digest_json(made.queries)]
            else:  # the bundled golden corpus: its content digests
                corpus, judgments = golden_corpus(chunk_size=self.exp.inputs.chunk_size,
                                                  overlap=self.exp.inputs.overlap)
                content = {"golden": [corpus.digest, judgments.digest]}
            settings = self.exp.inputs.model_dump(
                mode="json", include={"granularity", "chunk_size", "overlap"})
            extra = {"collection": self.exp.inputs.collection.name
                     if self.exp.inputs.collection else None,
                     "split": self.exp.inputs.beir.split if self.exp.inputs.beir else None}
            if self.exp.inputs.irds_label is not None:
                extra["irds"] = self.exp.inputs.irds_label
            self._digest = digest_json({"content": content, "settings": settings, **extra})
        return self._digest

    def load(self, granularity: str | None = None, chunk_size: int | None = None,
             overlap: int | None = None) -> EvalInputs:
        """The corpus, queries and qrels, as ``rankproof eval`` reads them (loaded once per
        granularity and chunking)."""
        src = self.exp.inputs
        g = granularity or src.default_granularity
        size = src.chunk_size if chunk_size is None else chunk_size
        over = src.overlap if overlap is None else overlap
        key = (g, size, over)
        if key not in self._loaded:
            r = self.exp.resolve
            if src.collection is not None:
                made = collection_inputs(src.collection.name, r(src.collection.root),
                                         g, size, over)  # type: ignore[arg-type]
            elif src.irds_label is not None:
                made = irds_inputs(src.irds_label, g, size, over)  # type: ignore[arg-type]
            elif src.beir is not None:
                made = beir_inputs(r(src.beir.folder), src.beir.split, g,  # type: ignore[arg-type]
                                   size, over)
            elif src.corpus is not None:
                corpus = r(src.corpus)
                if src.judgments is None:
                    found = find_adaptation(corpus)
                    if found is None:
                        raise ConfigError(f"{self.exp.path}: inputs.corpus needs judgments")
                    made = directory_inputs(found[0], found[1], g, size,  # type: ignore[arg-type]
                                            over, name=corpus.resolve().name, complete=False)
                else:
                    made = directory_inputs(corpus, r(src.judgments), g,  # type: ignore[arg-type]
                                            size, over)
            elif src.qrels is not None:
                raise ConfigError(f"{self.exp.path}: the inputs give qrels only; no corpus "
                                  "to retrieve from")
            else:
                made = golden_inputs(g, size, over)  # type: ignore[arg-type]
            self._loaded[key] = made
        return self._loaded[key]

    def qrels(self) -> Qrels:
        """The judgments measure and compare stages score against (the inputs' default
        granularity)."""
        src = self.exp.inputs
        if src.qrels is None:
            return self.load().qrels
        if self._qrels is None:
            paths = [src.qrels] if isinstance(src.qrels, str) else src.qrels
            parts = [load_qrels(str(_source(self.exp, p))) for p in paths]
            if len(parts) == 1:
                self._qrels = parts[0]
            else:
                q: list[str] = []
                d: list[str] = []
                rels: list[int] = []
                for part in parts:
                    q += part.qids().to_pylist()
                    d += part.docids.to_pylist()
                    rels += part.rels.tolist()
                self._qrels = Qrels.from_columns(q, d, np.array(rels, dtype=np.int64),
                                                 source=",".join(paths))
        return self._qrels

    def queries(self) -> Mapping[str, str] | None:
        """Query id → text (for the evidence a comparison keeps), when the inputs have it."""
        src = self.exp.inputs
        if src.qrels is not None:
            return read_queries(_source(self.exp, src.topics)) if src.topics else None
        return dict(self.load().queries)

    def complete_judgments(self) -> bool:
        return self.exp.inputs.qrels is None and self.load().complete_judgments
