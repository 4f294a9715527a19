"""Checkpoints of a sharded target run: finished shards on disk, so a run resumes.

A 100,000-query run against a service takes hours; a dropped connection or a
killed CI job near the end must not cost the part already done. Each finished
shard's responses are written, atomically, to their own file in a checkpoint
folder; a rerun with ``resume=True`` (``--resume``) reads the shards that are
there and invokes only the rest. The folder is removed once the run completes.

Identity. The default folder sits under the rankproof cache folder
(`rankproof.retrieval.default_cache_dir`, ``$RANKPROOF_CACHE`` or
``~/.cache/rankproof``), in ``target-checkpoints/<key>``, where the key is a
digest of the target's identity (type, name, URL, payload and extraction
functions, timeouts, a digest of the headers — never the headers themselves),
the golden cases (ids, queries, judgments, tags, meta, in order) and the
metrics. ``max_concurrency`` and the engine are not part of it: resuming on
more workers gives the same responses. ``manifest.json`` records the same
identity and the shard size, and is compared on resume, so a folder given
explicitly for another run (or written with another shard size) is refused,
never mixed in. A shard file is named after its index and a digest of its case
ids and holds one JSON line per case (id, ranked ids, text, latency, meta,
scores), checked against the shard's cases when read back.

A checkpoint is never reused or overwritten silently: without ``resume`` an
existing one is refused with a message saying how to continue or start over.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rankproof._errors import ConfigError, InputError, RankproofError
from rankproof._io import atomic_write
from rankproof._version import __version__
from rankproof.data import parse_document
from rankproof.targets._base import CallableTarget
from rankproof.targets._case import Case, TargetResponse
from rankproof.targets._http import HttpTarget

MANIFEST = "manifest.json"
KIND = "rankproof.targets.checkpoint"
VERSION = 1
FOLDER = "target-checkpoints"


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _qualname(fn: Any) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def target_identity(target: Any) -> dict[str, Any]:
    """What decides a target's responses, as plain JSON (no secrets: headers are digested)."""
    kind = f"{type(target).__module__}.{type(target).__qualname__}"
    out: dict[str, Any] = {"type": kind, "name": getattr(target, "name", None)}
    if isinstance(target, HttpTarget):
        s = target.settings()
        s.pop("max_concurrency")  # how fast, not what is answered
        s["headers_digest"] = _digest(sorted(s.pop("headers").items()))
        s["build_payload"] = _qualname(s["build_payload"])
        s["extract"] = _qualname(s["extract"])
        s["meta_keys"] = list(s["meta_keys"])
        out.update(s)
    elif isinstance(target, CallableTarget):
        out["fn"] = _qualname(target.fn)
    else:
        out["repr"] = repr(target)
        if hasattr(target, "retriever"):  # a RetrieverTarget: its stage decides the answers
            out["retriever"] = repr(target.retriever)
    return out


def goldens_digest(cases: Sequence[Case]) -> str:
    """sha256 of the cases in order: everything a target or a metric may read."""
    h = hashlib.sha256(b"rankproof-goldens-v1\0")
    for c in cases:
        row = [c.id, c.query, list(c.relevant),
               None if c.relevance is None else sorted(dict(c.relevance).items()),
               list(c.tags), dict(c.meta)]
        h.update(json.dumps(row, sort_keys=True, default=repr).encode("utf-8"))
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


def ids_digest(cases: Sequence[Case]) -> str:
    return hashlib.sha256("\0".join(c.id for c in cases).encode("utf-8")).hexdigest()


def default_root() -> Path:
    from rankproof.retrieval import default_cache_dir

    return default_cache_dir() / FOLDER


def _response_line(case: Case, r: TargetResponse) -> str:
    row = {"case_id": case.id, "ranked_ids": list(r.ranked_ids), "text": r.text,
           "latency_ms": r.latency_ms, "meta": dict(r.meta),
           "scores": None if r.scores is None else list(r.scores)}
    try:
        return json.dumps(row, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise RankproofError(
            f"case {case.id!r}: the response's meta cannot be checkpointed as JSON ({exc}); "
            "return JSON values in meta, or run without a checkpoint (checkpoint=False)"
        ) from None


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"target": {"name": x}}`` as ``{"target.name": x}``, so a mismatch names its field."""
    if not isinstance(value, Mapping):
        return {prefix or "identity": value}
    out: dict[str, Any] = {}
    for k, v in value.items():
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


class Checkpoint:
    """The checkpoint folder of one sharded run: `open` it, `write` shards, `remove` it."""

    def __init__(self, folder: Path, identity: Mapping[str, Any], shard_size: int,
                 cases: int) -> None:
        self.folder = folder
        self.identity = dict(identity)
        self.shard_size = shard_size
        self.cases = cases

    @staticmethod
    def key(identity: Mapping[str, Any]) -> str:
        return _digest(identity)[:32]

    @classmethod
    def open(cls, folder: str | os.PathLike[str] | None, identity: Mapping[str, Any], *,
             shard_size: int, cases: int, resume: bool) -> Checkpoint:
        """Claim ``folder`` (default: the cache's folder for this run's key).

        A fresh folder gets its manifest. An existing one is refused unless
        ``resume`` is set, and is then reused only when its manifest matches.
        """
        path = Path(folder) if folder is not None else default_root() / cls.key(identity)
        ck = cls(path, identity, shard_size, cases)
        manifest = path / MANIFEST
        exists = path.exists() and (not path.is_dir() or any(path.iterdir()))
        if exists:
            if not path.is_dir() or not manifest.is_file():
                raise ConfigError(f"checkpoint folder {path} exists and is not a rankproof "
                                  "target checkpoint (no manifest.json); choose another folder "
                                  "or delete it")
            found = ck._read_manifest()
            done = len(list(path.glob("shard-*.jsonl")))
            if not resume:
                raise ConfigError(
                    f"a checkpoint of an interrupted run exists at {path} ({done} shard(s) "
                    "done); pass --resume (resume=True) to continue it, or delete the folder "
                    "to start over")
            ck._check_manifest(found)
            return ck
        try:
            path.mkdir(parents=True, exist_ok=True)
            with atomic_write(manifest) as fh:
                fh.write(json.dumps(ck._manifest(), indent=2, default=repr) + "\n")
        except OSError as exc:
            raise ConfigError(f"cannot create the checkpoint folder {path}: "
                              f"{exc.strerror or exc}") from None
        return ck

    def _manifest(self) -> dict[str, Any]:
        return {"kind": KIND, "version": VERSION, "key": self.key(self.identity),
                "identity": self.identity, "shard_size": self.shard_size,
                "cases": self.cases, "tool_version": __version__}

    def _read_manifest(self) -> dict[str, Any]:
        path = self.folder / MANIFEST
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InputError(f"unreadable checkpoint manifest: {exc}", path=str(path)) from None
        data = parse_document(raw, str(path), what="checkpoint manifest")  # bounded
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise InputError(f"not a rankproof target checkpoint manifest (kind {KIND!r} "
                             "expected)", path=str(path), field="kind")
        return data

    def _check_manifest(self, found: Mapping[str, Any]) -> None:
        mine = json.loads(json.dumps(self._manifest(), default=repr))
        if found.get("version") != VERSION:
            raise ConfigError(f"checkpoint {self.folder} has format version "
                              f"{found.get('version')!r}, this rankproof writes {VERSION}; "
                              "delete it to start over")
        ours, theirs = _flat(mine["identity"]), _flat(found.get("identity"))
        diff = [k for k in sorted(set(ours) | set(theirs)) if ours.get(k) != theirs.get(k)]
        if diff:
            shown = "; ".join(f"{k}: checkpoint {theirs.get(k)!r}, this run {ours.get(k)!r}"
                              for k in diff[:3])
            raise ConfigError(f"checkpoint {self.folder} was written by a different run "
                              f"({shown}); it cannot be resumed by this one — delete it or "
                              "give another checkpoint folder")
        for key, what in (("shard_size", "shard size"), ("cases", "number of cases")):
            if found.get(key) != mine[key]:
                raise ConfigError(f"checkpoint {self.folder} was written with {what} "
                                  f"{found.get(key)!r}, this run has {mine[key]!r}; resume "
                                  "with the same settings or delete it")

    def shard_path(self, index: int, cases: Sequence[Case]) -> Path:
        return self.folder / f"shard-{index:06d}-{ids_digest(cases)[:16]}.jsonl"

    def write(self, index: int, cases: Sequence[Case],
              responses: Sequence[TargetResponse]) -> None:
        """The shard's responses, one JSON line per case, written all at once or not at all."""
        text = "".join(_response_line(c, r) + "\n" for c, r in zip(cases, responses,
                                                                    strict=True))
        with atomic_write(self.shard_path(index, cases)) as fh:
            fh.write(text)

    def read(self, index: int, cases: Sequence[Case]) -> list[TargetResponse] | None:
        """The shard's responses when its file is there (checked line by line), else None."""
        path = self.shard_path(index, cases)
        if not path.is_file():
            return None
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) != len(cases):
            raise InputError(f"checkpoint shard holds {len(lines)} responses for "
                             f"{len(cases)} cases; delete the checkpoint folder to start over",
                             path=str(path))
        out = []
        for n, (line, case) in enumerate(zip(lines, cases, strict=True), start=1):
            try:
                row = parse_document(line, f"{path}, line {n}", what="checkpoint shard row")
                if row["case_id"] != case.id:
                    raise ValueError(f"case {row['case_id']!r} where {case.id!r} was expected")
                out.append(TargetResponse(ranked_ids=tuple(row["ranked_ids"]), text=row["text"],
                                          latency_ms=row["latency_ms"], meta=row["meta"] or {},
                                          scores=row["scores"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"malformed checkpoint shard ({exc}); delete the checkpoint "
                                 "folder to start over", path=str(path), line=n) from None
        return out

    def remove(self) -> None:
        """Delete the folder (the run completed); a folder already gone is fine."""
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self.folder)
