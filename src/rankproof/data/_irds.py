"""Datasets by id: ``irds:ID`` reads qrels, topics and documents through ir_datasets, from
its cache only.

Wherever qrels or topics are read (`load_qrels`, `rankproof.comparison.read_queries`), a
name ``irds:ID`` (``irds:msmarco-passage/trec-dl-2019/judged``) stands for that ir_datasets
dataset's qrels or queries; `irds_documents` yields its documents as ``(doc id, text)``
pairs, for the harness to build a corpus from (``rankproof eval --irds ID``). ir_datasets
is an optional extra (``pip install 'rankproof[irds]'``), imported only when such a name
is read.

rankproof never starts a download. ir_datasets fetches a missing file on first use, so
before anything is read the dataset's handler is walked for the files it would read
(ir_datasets' ``Cache``, ``Download`` and ``LocalDownload`` objects and the extractions
built on them) and a file that is not on disk is refused (`InputError` naming the id, the
missing path and where ir_datasets would fetch it from). What the walk cannot see — a
subset filtered by ids computed from another entity (the ``judged`` subsets) — is caught
while reading: for the duration of the read every ir_datasets download entry point raises
instead of fetching, and the refusal is the same error.

Every file the walk finds on disk for an entity that is read is recorded with
`rankproof._manifest.note_dataset_files`, so that a provenance block naming ``irds:ID``
carries a digest of the cached files it was built from (`irds_files` walks without
reading). A corpus is bounded: above `max_irds_docs` documents (``RANKPROOF_MAX_IRDS_DOCS``,
default 2,000,000) it is refused, from the dataset's own count when it has one, else when
the next document would pass the bound.

Qrels are turned into TREC qrels text and read by the TREC reader (`read_trec_qrels`), so
``irds:ID`` and the same qrels exported to a file give the same `Qrels`, digest included.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path, PurePath
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, Literal, TypeVar

from rankproof._errors import InputError, MissingExtraError
from rankproof._manifest import note_dataset_files
from rankproof.data._text import Input

IRDS_PREFIX = "irds:"
"""The prefix that names an ir_datasets dataset where a qrels or topics path is expected."""

Entity = Literal["qrels", "queries", "docs"]
ENTITIES: tuple[Entity, ...] = ("docs", "queries", "qrels")

DEFAULT_MAX_IRDS_DOCS = 2_000_000
"""Most documents a corpus read by id may hold (``RANKPROOF_MAX_IRDS_DOCS`` raises it)."""

_T = TypeVar("_T")

_MAX_DEPTH = 24
_GUARD = threading.Lock()


class _WouldDownload(Exception):
    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def max_irds_docs() -> int:
    """The bound on a corpus read by id: ``RANKPROOF_MAX_IRDS_DOCS`` when it is a positive
    integer (anything else is ignored, so a typo cannot switch the bound off), else
    `DEFAULT_MAX_IRDS_DOCS`. Read at each call, not at import."""
    raw = os.environ.get("RANKPROOF_MAX_IRDS_DOCS", "")
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_MAX_IRDS_DOCS
    return value if value > 0 else DEFAULT_MAX_IRDS_DOCS


def is_irds(path: Any) -> bool:
    """Whether ``path`` names an ir_datasets dataset (``irds:ID``) rather than a file."""
    return isinstance(path, str | PurePath) and str(path).startswith(IRDS_PREFIX)


def irds_id(path: str | PurePath) -> str:
    """The dataset id of ``irds:ID`` (refused when empty)."""
    text = str(path)
    dataset_id = text[len(IRDS_PREFIX):] if text.startswith(IRDS_PREFIX) else text
    if not dataset_id.strip():
        raise InputError("'irds:' names no dataset; give irds:ID, e.g. "
                         "irds:msmarco-passage/trec-dl-2019/judged", path=text)
    return dataset_id


def _module() -> ModuleType:
    try:
        return importlib.import_module("ir_datasets")
    except ImportError as exc:
        raise MissingExtraError("irds:ID names an ir_datasets dataset, which needs the optional "
                                "dependency ir_datasets: pip install 'rankproof[irds]'") from exc


def _label(dataset_id: str) -> str:
    return IRDS_PREFIX + dataset_id


def _dataset(irds: ModuleType, dataset_id: str, entity: Entity) -> Any:
    try:
        dataset = irds.load(dataset_id)
    except KeyError:
        raise InputError(f"unknown ir_datasets id {dataset_id!r} (see "
                         "https://ir-datasets.com for the ids; a dataset of your own must be "
                         "registered with ir_datasets.registry.register first)",
                         path=_label(dataset_id)) from None
    has = getattr(dataset, f"has_{entity}", None)
    if has is None or not has():
        raise InputError(f"the ir_datasets dataset {dataset_id!r} has no {entity}",
                         path=_label(dataset_id))
    return dataset


# ---------------------------------------------------------------- what is on disk


def _download_cached(download: Any, local: Any) -> bool:
    """An ir_datasets ``Download`` that can be read without the network."""
    if getattr(download, "_path", None) is not None:
        return True
    cache_path = getattr(download, "_cache_path", None)
    if cache_path is not None and cache_path != os.devnull and os.path.exists(cache_path):
        return True
    return any(isinstance(m, local) and Path(m._path).exists()
               for m in getattr(download, "mirrors", ()))


def _download_files(download: Any, local: Any) -> list[str]:
    """The file(s) on disk a cached ``Download`` reads."""
    for where in (getattr(download, "_path", None), getattr(download, "_cache_path", None)):
        if where is not None and where != os.devnull and os.path.exists(where):
            return [str(where)]
    return [str(m._path) for m in getattr(download, "mirrors", ())
            if isinstance(m, local) and Path(m._path).exists()][:1]


def _source(download: Any) -> str:
    urls = [m.url for m in getattr(download, "mirrors", ()) if hasattr(m, "url")]
    return urls[0] if urls else type(download).__name__


def _missing(obj: Any, irds: ModuleType, entity: Entity, seen: set[int], depth: int,
             out: list[str], found: list[str] | None = None) -> None:
    """Append to ``out`` every file ``obj`` would fetch because it is not on disk (and to
    ``found``, when given, every cached file or folder it would read)."""
    if depth > _MAX_DEPTH or id(obj) in seen or obj is None:
        return
    if isinstance(obj, str | bytes | int | float | bool | Path | type | ModuleType):
        return
    seen.add(id(obj))
    fileio = irds.util.fileio
    download = irds.util.download
    if isinstance(obj, irds.Dataset):
        if getattr(obj, f"has_{entity}")():
            _missing(getattr(obj, f"{entity}_handler")(), irds, entity, seen, depth + 1, out, found)
        return
    if isinstance(obj, list | tuple | set | frozenset):
        for item in obj:
            _missing(item, irds, entity, seen, depth + 1, out, found)
        return
    if isinstance(obj, dict):
        for item in obj.values():
            _missing(item, irds, entity, seen, depth + 1, out, found)
        return
    if isinstance(obj, fileio.Cache):
        if not Path(obj._path).exists():
            out.append(f"{obj._path} (built from {_describe(obj._streamer, irds)})")
        elif found is not None:
            found.append(str(obj._path))
        return
    if isinstance(obj, download.Download):
        if not _download_cached(obj, download.LocalDownload):
            where = obj._cache_path or "a temporary file"
            out.append(f"{where} (downloaded from {_source(obj)})")
        elif found is not None:
            found.extend(_download_files(obj, download.LocalDownload))
        return
    if isinstance(obj, download.LocalDownload):
        if not Path(obj._path).exists():
            out.append(str(obj._path))
        elif found is not None:
            found.append(str(obj._path))
        return
    if isinstance(obj, download.BaseDownload):
        out.append(f"a download from {getattr(obj, 'url', type(obj).__name__)}")
        return
    for kind, attr in ((fileio.TarExtractAll, "_extract_path"),
                       (fileio.ZipExtractCache, "extract_path"), (fileio.ReTar, "_output_file")):
        if isinstance(obj, kind) and os.path.exists(getattr(obj, attr)):
            if found is not None:
                found.append(str(getattr(obj, attr)))
            return
    if isinstance(obj, fileio.StringFile | fileio.PackageDataFile | irds.util.Lazy):
        return  # in memory or in the package; a Lazy is checked by the read guard
    if isinstance(obj, FunctionType | MethodType | BuiltinFunctionType):
        return  # code: what it reads is seen when it runs (the read guard)
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        for item in state.values():
            _missing(item, irds, entity, seen, depth + 1, out, found)


def _describe(streamer: Any, irds: ModuleType) -> str:
    """Where a ``Cache`` would get its content: the first download below it."""
    node, depth = streamer, 0
    download = irds.util.download
    while node is not None and depth < _MAX_DEPTH:
        if isinstance(node, download.Download):
            return _source(node)
        if isinstance(node, download.BaseDownload):
            return str(getattr(node, "url", getattr(node, "_path", type(node).__name__)))
        node = getattr(node, "_streamer", None) or getattr(node, "dlc", None)
        depth += 1
    return type(streamer).__name__


def _refusal(dataset_id: str, entity: Entity, missing: list[str]) -> InputError:
    irds = _module()
    home = irds.util.home_path() if hasattr(irds.util, "home_path") else "~/.ir_datasets"
    shown = "; ".join(missing[:3]) + (f"; and {len(missing) - 3} more" if len(missing) > 3
                                      else "")
    return InputError(f"the {entity} of {dataset_id!r} are not in the local ir_datasets cache "
                      f"({home}; set by IR_DATASETS_HOME): missing {shown}. rankproof never "
                      "downloads: fetch them once where the network is reachable (ir_datasets "
                      f"export {dataset_id} {entity} > /dev/null) or copy that cache here",
                      path=_label(dataset_id), field=entity)


@contextlib.contextmanager
def _no_download(irds: ModuleType) -> Iterator[None]:
    """Every ir_datasets download entry point raises `_WouldDownload` instead of fetching."""
    download = irds.util.download
    local = download.LocalDownload
    originals: list[tuple[type, str, Any]] = []

    def refuse_path(self: Any, force: bool = True) -> Any:
        if force and not _download_cached(self, local):
            raise _WouldDownload(f"{self._cache_path or 'a temporary file'} (downloaded from "
                                 f"{_source(self)})")
        return original_path(self, force)

    def refuse_stream(self: Any) -> Any:
        raise _WouldDownload(f"a download from {getattr(self, 'url', type(self).__name__)}")

    original_path = download.Download.path
    with _GUARD:
        originals.append((download.Download, "path", original_path))
        download.Download.path = refuse_path
        for cls in (download.RequestsDownload, download.GoogleDriveDownload,
                    download.GoogleCloudBucketStream):
            originals.append((cls, "stream", cls.__dict__["stream"]))
            cls.stream = refuse_stream
        try:
            yield
        finally:
            for cls, name, value in originals:
                setattr(cls, name, value)


def _check(irds: ModuleType, dataset_id: str, entities: Sequence[Entity]) -> list[str]:
    """Refuse (`_refusal`, naming the first entity that lacks a file) unless every file the
    ``entities`` of the dataset would read is on disk; the cached files found, recorded for
    the provenance block. Nothing is read: every entity is checked before any is."""
    found: list[str] = []
    for entity in entities:
        dataset = _dataset(irds, dataset_id, entity)
        missing: list[str] = []
        _missing(getattr(dataset, f"{entity}_handler")(), irds, entity, set(), 0, missing,
                 found)
        if missing:
            raise _refusal(dataset_id, entity, missing)
    files = list(dict.fromkeys(found))
    note_dataset_files(_label(dataset_id), files)
    return files


def irds_files(path: str | PurePath,
               entities: Sequence[Entity] = ENTITIES) -> tuple[str, ...]:
    """The cached files (or extracted folders) the ``entities`` of ``irds:ID`` would read,
    after checking they are all on disk (refused otherwise, as a read is); nothing is read.

    They are recorded for the provenance block, whose entry for ``irds:ID`` then carries
    their digest (`rankproof._manifest.input_entry`).
    """
    return tuple(_check(_module(), irds_id(path), entities))


def _read(path: str | PurePath, entity: Entity,
          take: Callable[[Iterator[Any]], _T]) -> tuple[str, _T]:
    """``take`` over the records of one entity of a cached dataset (see the module
    docstring), under the read guard."""
    dataset_id = irds_id(path)
    irds = _module()
    dataset = _dataset(irds, dataset_id, entity)
    _check(irds, dataset_id, [entity])
    try:
        with _no_download(irds):
            return dataset_id, take(iter(getattr(dataset, f"{entity}_iter")()))
    except _WouldDownload as exc:
        raise _refusal(dataset_id, entity, [exc.what]) from None
    except RuntimeError as exc:  # ir_datasets wraps a failed mirror list in RuntimeError
        inner = [e for _, e in (exc.args[1] if len(exc.args) > 1 else ())
                 if isinstance(e, _WouldDownload)]
        if inner:
            raise _refusal(dataset_id, entity, [inner[0].what]) from None
        raise


def _field(value: Any, what: str, dataset_id: str, index: int) -> str:
    text = str(value)
    if not text or any(c.isspace() for c in text):
        raise InputError(f"record {index}: {what} {text!r} is empty or holds whitespace, which "
                         "TREC qrels cannot carry", path=_label(dataset_id), field=what)
    return text


def irds_qrels_input(path: str | PurePath) -> Input:
    """The qrels of ``irds:ID`` as TREC qrels text (an `Input` labelled ``irds:ID``).

    `load_qrels` reads it with the TREC reader, so duplicates, labels and order are judged
    exactly as for a qrels file.
    """
    dataset_id, records = _read(path, "qrels", list)
    lines = []
    for i, q in enumerate(records, 1):
        qid = _field(q.query_id, "query_id", dataset_id, i)
        docid = _field(q.doc_id, "doc_id", dataset_id, i)
        iteration = _field(getattr(q, "iteration", "0") or "0", "iteration", dataset_id, i)
        lines.append(f"{qid} {iteration} {docid} {int(q.relevance)}\n")
    return Input.from_bytes("".join(lines).encode("utf-8"), _label(dataset_id))


def irds_queries(path: str | PurePath) -> list[tuple[str, str]]:
    """``[(query id, text)]`` of ``irds:ID``, in the dataset's order.

    The text is the query's ``default_text()`` (a TREC topic's title), else its ``text``.
    """
    _, records = _read(path, "queries", list)
    out = []
    for q in records:
        text = q.default_text() if hasattr(q, "default_text") else getattr(q, "text", "")
        out.append((str(q.query_id), str(text)))
    return out


def _doc_text(doc: Any) -> str:
    """A document's text: its ``text`` field, after its ``title`` and a blank line when it
    has a non-blank one (as the BEIR adapter joins them); a record without ``text`` gives
    its ``default_text()``."""
    if hasattr(doc, "text"):
        body = str(doc.text)
        title = str(getattr(doc, "title", "") or "")
        return f"{title}\n\n{body}" if title.strip() else body
    return str(doc.default_text()) if hasattr(doc, "default_text") else ""


def _docs_count(dataset: Any, irds: ModuleType) -> int | None:
    """The dataset's own document count, when it knows it without reading the documents."""
    try:
        with _no_download(irds):
            count = dataset.docs_count()
    except (_WouldDownload, AttributeError, NotImplementedError, OSError, RuntimeError):
        return None
    return count if isinstance(count, int) else None


def _too_many(dataset_id: str, bound: int, count: str) -> InputError:
    return InputError(f"the corpus of {dataset_id!r} holds {count} documents, more than "
                      f"rankproof reads by id ({bound:,}; RANKPROOF_MAX_IRDS_DOCS raises the "
                      "bound, at the cost of memory: every document and chunk is held in "
                      "memory)", path=_label(dataset_id), field="docs")


def irds_documents(path: str | PurePath,
                   max_docs: int | None = None) -> list[tuple[str, str]]:
    """``[(doc id, text)]`` of ``irds:ID``'s corpus, in the dataset's order, read from the
    local cache only (see the module docstring).

    The text is the record's ``text``, with its ``title`` and a blank line in front when the
    dataset's documents have a non-blank title (`_doc_text`). More than ``max_docs``
    documents (default `max_irds_docs`) are refused: from the dataset's own count before
    anything is read when it has one, else as soon as one more is read.
    """
    bound = max_irds_docs() if max_docs is None else max_docs
    dataset_id = irds_id(path)
    irds = _module()
    count = _docs_count(_dataset(irds, dataset_id, "docs"), irds)
    if count is not None and count > bound:
        raise _too_many(dataset_id, bound, f"{count:,}")

    def take(records: Iterable[Any]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for doc in records:
            if len(out) == bound:
                raise _too_many(dataset_id, bound, "more than that")
            out.append((str(doc.doc_id), _doc_text(doc)))
        return out

    return _read(path, "docs", take)[1]
