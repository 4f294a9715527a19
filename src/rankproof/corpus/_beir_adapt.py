"""Convert a BEIR dataset folder into a rankproof corpus + judgments.

BEIR (Thakur et al., 2021) ships ``corpus.jsonl`` (``_id``, ``title``,
``text``), ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv``
(header ``query-id corpus-id score``). :func:`adapt_beir` writes::

    OUT/docs/<doc_id>.txt     one file per document: title, blank line, text
    OUT/judgments.jsonl       one row per query with a positive judgment

so that ``read_corpus(OUT / "docs")`` and ``read_judgments(OUT /
"judgments.jsonl", corpus)`` load it (``layout="groundkit"`` names the
documents folder ``corpus/`` instead, groundkit's layout; `find_adaptation`
finds either). BEIR judges whole documents, so each gold quote is the whole
document text: document-level relevance expressed in the span vocabulary
(at chunk granularity every chunk of a relevant document is relevant). Only
positive rows (score > 0) become gold. **Grades are kept**: when some score
is above 1, the row's ``meta.grades`` maps each gold document to its BEIR
score, and `graded_qrels` (what ``rankproof eval`` reads) gives those
grades back as relevance labels, so graded nDCG is BEIR's own. Every query
becomes category ``normal``.

**Empty text** is refused, judged or not, naming the file, line and field:
a document whose title and text are both blank (it has no chunks, so it
could never be retrieved nor quoted) and a query
whose text is blank (it would be searched as nothing). This is groundkit's
rule; no exception is made for unjudged rows, because an empty row is a
broken download, not a choice.

**Ids.** A document id becomes a file name, so it is untrusted input
(DESIGN.md invariant 8): it must be a single, portable path component — not
empty, no ``/`` or ``\\``, not ``.`` or ``..``, no leading ``.`` (hidden
files are skipped by ``read_corpus``), no drive or absolute form, no control
characters, not a Windows reserved device name (``CON``, ``NUL``, ``COM1``,
…, which Windows reserves with any extension), at most 255 bytes with the
``.txt`` suffix — and two ids must not differ only by case (or Unicode
normalisation): they would be one file on macOS and Windows. A safe id
that Windows would still refuse as a file name (``< > : " | ? *``, a
trailing dot or space: BEIR's dbpedia-entity ids look like
``<dbpedia:Animal>``) is written under its `portable_stem`, those characters
(and ``%``) escaped as ``%XX``, so every file name the adapter writes can be
checked out on Linux, macOS and Windows. In the judgments the document id is
the file's relative path, ``<portable_stem(doc_id)>.txt``.
Query ids must be kebab-case lowercase in judgments; a BEIR query id that
already is stays as it is. With ``query_ids="rename"`` (the default) any
other becomes ``<slug>-<8 hex of sha256(id)>`` (a pure function of the id
alone, so the mapping does not depend on file order), and every row keeps
the original in ``source_id``; ``query_ids="refuse"`` refuses a judged query
whose id is not kebab-case instead (groundkit's rule), listing them.

**Atomicity** (invariant 6). Everything is read and validated before a
byte is written: unsafe or colliding ids, duplicate ids, qrels rows naming
unknown documents or queries, a split with no positive rows, a relevant
document with no text, an output path that is a symlink, a file, or a
non-empty directory. Then the output is built in a temporary sibling
directory, every path containment-checked against it, and renamed into
place; on any failure — an error, or SIGINT/SIGTERM, which the CLI turns
into an exception — the temporary directory is removed and ``out`` is left
as it was. ``overwrite`` (the CLI's ``--force``) replaces a previous
adaptation as a whole, and nothing else.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import Any, Literal

from rankproof._errors import InputError
from rankproof._io import PathLike, current_umask, pause_before_rename
from rankproof._limits import shown
from rankproof.corpus._corpus import is_encodable, normalise_text
from rankproof.corpus._judgments import QUERY_ID_PATTERN
from rankproof.data import Input, read_jsonl, read_qrels_rows

DOC_SUFFIX = ".txt"
Layout = Literal["rankproof", "groundkit"]
QueryIdPolicy = Literal["rename", "refuse"]
DOCS_FOLDER: dict[str, str] = {"rankproof": "docs", "groundkit": "corpus"}
"""The documents folder of each output layout (the judgments are ``judgments.jsonl`` in both)."""
JUDGMENTS_FILE = "judgments.jsonl"
_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"com{i}" for i in "123456789¹²³"}
    | {f"lpt{i}" for i in "123456789¹²³"}
)
# Characters Windows refuses in a file name ('/' and '\\' are refused as separators),
# and '%', the escape character of `portable_stem`.
_ESCAPED = frozenset('<>:"|?*%')
_NON_SLUG = re.compile(r"[^a-z0-9]+")
_MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class BeirAdaptation:
    """What :func:`adapt_beir` wrote.

    ``documents`` counts every document written; ``queries`` the queries with
    a positive judgment (one judgments row each); ``positives`` the positive
    (query, document) pairs; ``characters`` the characters of all documents
    as written. ``queries_without_positives`` counts queries of
    ``queries.jsonl`` that have no positive row in the split (not written);
    ``renamed_queries`` counts query ids that were not kebab-case and were
    mapped (the original is in each row's ``source_id``); ``graded`` is True
    when some positive score was above 1 (the grades are in ``meta.grades``
    and `graded_qrels` keeps them). ``source`` is the BEIR folder,
    ``docs_dir`` and ``judgments_path`` what was written under ``out``.
    """

    out: Path
    split: str
    documents: int
    queries: int
    positives: int
    queries_without_positives: int
    renamed_queries: int
    graded: bool
    source: Path = Path()
    docs_dir: Path = Path()
    judgments_path: Path = Path()
    characters: int = 0
    layout: Layout = "rankproof"


def unsafe_component_reason(name: str) -> str | None:
    """Why ``name`` is not a safe, portable single path component, or None if it is.

    Characters that are merely not allowed in Windows file names (``< > : "
    | ? *``, a trailing dot or space) do not make an id unsafe: the adapter
    writes such an id under its `portable_stem`, so BEIR's own ids
    (``<dbpedia:Animal>``) still convert.
    """
    if not name:
        return "is empty"
    if "/" in name or "\\" in name:
        return "contains a path separator ('/' or '\\')"
    if name in (".", ".."):
        return f"is {shown(name)}, a relative path step"
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in name):
        return "contains a control character"
    if not is_encodable(name):
        return "holds an unpaired surrogate (not valid UTF-8)"
    if PureWindowsPath(name).drive or PureWindowsPath(name).is_absolute():
        return "is an absolute or drive path"
    if name.startswith("."):
        return "starts with '.', a hidden file that read_corpus skips"
    stem = name.split(".", 1)[0].rstrip(" ").lower()
    if stem in _WINDOWS_RESERVED:
        return f"is a reserved device name on Windows ({stem.upper()})"
    if len((portable_stem(name) + DOC_SUFFIX).encode("utf-8")) > _MAX_NAME_BYTES:
        return f"is too long for a file name ({_MAX_NAME_BYTES} bytes with '{DOC_SUFFIX}')"
    return None


def portable_stem(doc_id: str) -> str:
    """The file name (without ``.txt``) document ``doc_id`` is written under.

    The id itself when it is a portable file name already; otherwise each
    character Windows refuses in a file name (``< > : " | ? *``), a trailing
    dot or space (which Windows drops), and ``%`` itself are written as
    ``%XX`` (their UTF-8 bytes in upper-case hex). ``%`` being escaped too
    makes the mapping one-to-one, and ids that differ only by case still map
    to names that differ only by case (refused as a collision before).

    >>> portable_stem("<dbpedia:Animal>"), portable_stem("d1"), portable_stem("a.")
    ('%3Cdbpedia%3AAnimal%3E', 'd1', 'a%2E')
    """
    if not any(ch in _ESCAPED for ch in doc_id) and not doc_id.endswith((".", " ")):
        return doc_id
    body = doc_id.rstrip(". ")
    tail = doc_id[len(body):]
    out = "".join(_escape(ch) if ch in _ESCAPED else ch for ch in body)
    return out + "".join(_escape(ch) for ch in tail)


def _escape(ch: str) -> str:
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8"))


def kebab_query_id(original: str) -> str:
    """A kebab-case lowercase id for ``original``: itself if it already is one.

    Otherwise ``<slug>-<first 8 hex digits of sha256(original)>``, where the
    slug lower-cases and joins ``[a-z0-9]`` runs with ``-`` (``q`` when none
    remain). The hash makes ids that slug alike (``Q1``, ``q_1``) distinct.

    >>> kebab_query_id("q-7"), kebab_query_id("Q 7")
    ('q-7', 'q-7-cac6c23f')
    """
    if QUERY_ID_PATTERN.match(original):
        return original
    slug = _NON_SLUG.sub("-", original.lower()).strip("-") or "q"
    return f"{slug}-{hashlib.sha256(original.encode('utf-8')).hexdigest()[:8]}"


# -- reading ------------------------------------------------------------------


def _open(path: Path) -> Input:
    """A BEIR file through the one text reader; a missing one says what a BEIR folder holds."""
    if not path.exists():
        raise InputError("file not found; a BEIR folder needs corpus.jsonl, queries.jsonl "
                         "and qrels/<split>.tsv", path=str(path))
    return Input.open(path)


def _id_value(value: Any, path: Path, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"_id must be a string, found {shown(value)}", path=str(path), line=line,
                         field="_id")
    return str(value)


def _read_jsonl(path: Path, need: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for lineno, row in read_jsonl(_open(path)):
        for key in need:
            if key not in row:
                raise InputError(f"missing key {key!r}", path=str(path), line=lineno, field=key)
        rows.append((lineno, row))
    return rows


def _text_field(row: dict[str, Any], key: str, path: Path, line: int) -> str:
    value = row.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{key} must be a string, found {type(value).__name__}",
                         path=str(path), line=line, field=key)
    if not is_encodable(value):
        raise InputError(f"{key} holds an unpaired surrogate and cannot be written as UTF-8",
                         path=str(path), line=line, field=key)
    return value


def _read_corpus_rows(path: Path) -> dict[str, tuple[int, str]]:
    docs: dict[str, tuple[int, str]] = {}
    folded: dict[str, tuple[str, int]] = {}
    for lineno, row in _read_jsonl(path, ("_id", "text")):
        doc_id = _id_value(row["_id"], path, lineno)
        reason = unsafe_component_reason(doc_id)
        if reason is not None:
            raise InputError(f"document id {shown(doc_id)} {reason}; it would become a file name",
                             path=str(path), line=lineno, field="_id")
        if doc_id in docs:
            raise InputError(f"duplicate document id {shown(doc_id)} (first on line "
                             f"{docs[doc_id][0]})", path=str(path), line=lineno, field="_id")
        key = unicodedata.normalize("NFC", doc_id).casefold()
        if key in folded:
            other, other_line = folded[key]
            raise InputError(
                f"document id {shown(doc_id)} collides with {shown(other)} (line {other_line}) "
                "when case is ignored: they would be the same file on macOS and Windows",
                path=str(path), line=lineno, field="_id",
            )
        folded[key] = (doc_id, lineno)
        title = _text_field(row, "title", path, lineno)
        body = _text_field(row, "text", path, lineno)
        text = normalise_text(f"{title}\n\n{body}" if title.strip() else body)
        if not text.strip():
            raise InputError(f"document {shown(doc_id)} has no text (title and text are both "
                             "empty or blank)", path=str(path), line=lineno, field="text")
        docs[doc_id] = (lineno, text)
    return docs


def _read_query_rows(path: Path) -> dict[str, tuple[int, str]]:
    queries: dict[str, tuple[int, str]] = {}
    for lineno, row in _read_jsonl(path, ("_id", "text")):
        qid = _id_value(row["_id"], path, lineno)
        if not qid:
            raise InputError("empty query id", path=str(path), line=lineno, field="_id")
        if not is_encodable(qid):
            raise InputError("query id holds an unpaired surrogate", path=str(path),
                             line=lineno, field="_id")
        if qid in queries:
            raise InputError(f"duplicate query id {shown(qid)} (first on line {queries[qid][0]})",
                             path=str(path), line=lineno, field="_id")
        text = _text_field(row, "text", path, lineno)
        if not text.strip():
            raise InputError(f"query {shown(qid)} has no text (empty or blank)", path=str(path),
                             line=lineno, field="text")
        queries[qid] = (lineno, text)
    return queries


def read_beir_corpus(path: PathLike) -> dict[str, str]:
    """``{doc id: text}`` of a BEIR ``corpus.jsonl``, validated as `adapt_beir` validates it
    (ids safe as file names, no duplicates, title and text joined, none empty)."""
    return {doc: text for doc, (_, text) in _read_corpus_rows(Path(path)).items()}


def read_beir_queries(path: PathLike) -> dict[str, str]:
    """``{query id: text}`` of a BEIR ``queries.jsonl`` in file order, validated as
    `adapt_beir` validates it."""
    return {qid: text for qid, (_, text) in _read_query_rows(Path(path)).items()}


def _read_split(
    path: Path, docs: dict[str, tuple[int, str]], queries: dict[str, tuple[int, str]]
) -> dict[str, dict[str, int]]:
    """Positive judgments ``{qid: {docid: score}}`` in file order; every row is checked."""
    rows = read_qrels_rows(_open(path), format="beir", allow_empty=True)
    positives: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for qid, docid, score, lineno in zip(rows.qids, rows.docids, rows.rels, rows.lines,
                                         strict=True):
        if qid not in queries:
            raise InputError(f"unknown query {shown(qid)} (not in queries.jsonl)", path=str(path),
                             line=lineno, field="query-id")
        if docid not in docs:
            raise InputError(f"unknown document {shown(docid)} (not in corpus.jsonl)",
                             path=str(path), line=lineno, field="corpus-id")
        if (qid, docid) in seen:
            raise InputError(f"duplicate judgment ({qid}, {docid}) (first on line "
                             f"{seen[qid, docid]})", path=str(path), line=lineno,
                             field="corpus-id")
        seen[qid, docid] = lineno
        if score > 0:  # documents and queries with no text were refused on reading
            positives.setdefault(qid, {})[docid] = score
    if not positives:
        raise InputError("the split has no positive judgments (score > 0)", path=str(path))
    return positives


# -- writing ------------------------------------------------------------------


def find_adaptation(folder: PathLike) -> tuple[Path, Path] | None:
    """``(documents folder, judgments file)`` when ``folder`` holds an adaptation, else None.

    An adaptation is exactly what `adapt_beir` writes, in either layout: a
    ``judgments.jsonl`` file beside a ``docs/`` (or groundkit's ``corpus/``)
    folder and nothing else. ``rankproof eval OUT`` uses it so that a folder
    written by ``rankproof adapt beir`` needs no ``--judgments``.
    """
    root = Path(folder)
    if root.is_symlink() or not root.is_dir():
        return None
    judgments = root / JUDGMENTS_FILE
    for docs_name in DOCS_FOLDER.values():
        docs = root / docs_name
        if ({p.name for p in root.iterdir()} == {docs_name, JUDGMENTS_FILE}
                and docs.is_dir() and not docs.is_symlink()
                and judgments.is_file() and not judgments.is_symlink()):
            return docs, judgments
    return None


def _is_adaptation(out: Path) -> bool:
    """Whether ``out`` holds exactly what an adaptation writes (see `find_adaptation`)."""
    return find_adaptation(out) is not None


def _check_out(out: Path, overwrite: bool = False) -> None:
    if out.is_symlink():
        raise InputError("the output path is a symlink; refusing to write through it",
                         path=str(out))
    if out.exists():
        if not out.is_dir():
            raise InputError("the output path exists and is not a directory", path=str(out))
        if any(out.iterdir()):
            if not overwrite:
                raise InputError("the output directory exists and is not empty (--force "
                                 "replaces a previous adaptation)", path=str(out))
            if not _is_adaptation(out):
                raise InputError("the output directory is not empty and is not a previous "
                                 "adaptation (docs/ or corpus/, and judgments.jsonl only), so "
                                 "--force does not replace it", path=str(out))


def _contained(path: Path, root: Path) -> Path:
    resolved = path.resolve()
    if not resolved.is_relative_to(root) or resolved == root:
        raise InputError(f"refusing to write {path}: it resolves outside the output folder",
                         path=str(path))
    return resolved


def _write_out(out_dir: Path, docs: dict[str, tuple[int, str]], rows: list[dict[str, Any]],
               overwrite: bool, docs_name: str = "docs") -> None:
    """Build the output in a temporary sibling folder, then rename it into place.

    On any failure — an `OSError`, or a signal the CLI turns into an
    exception — the temporary folder is removed and ``out_dir`` is as it was
    (a previous adaptation moved aside for ``overwrite`` is moved back). The
    folder gets the permissions ``mkdir`` would give it (the umask's), not
    ``mkdtemp``'s private ``0o700``.
    """
    tmp: Path | None = None
    old: Path | None = None
    placed = removed_empty_out = False
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp",
                                    dir=out_dir.parent))
        os.chmod(tmp, 0o777 & ~current_umask())
        root = tmp.resolve()
        docs_root = _contained(tmp / docs_name, root)
        docs_root.mkdir()
        for doc_id, (_, text) in docs.items():
            target = _contained(docs_root / (doc_id + DOC_SUFFIX), docs_root)
            if target.parent != docs_root:
                raise InputError(f"document id {doc_id!r} is not a single path component",
                                 field="_id")
            # "xb": never follow or overwrite an existing entry (a case-insensitive
            # file system would turn a collision into an overwrite).
            with open(target, "xb") as fh:
                fh.write(text.encode("utf-8"))
        with open(_contained(tmp / JUDGMENTS_FILE, root), "x", encoding="utf-8",
                  newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        pause_before_rename()
        _check_out(out_dir, overwrite)
        if out_dir.exists() and any(out_dir.iterdir()):  # a previous adaptation (checked)
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old",
                                        dir=out_dir.parent))
            os.replace(out_dir, old)
        elif out_dir.exists():
            out_dir.rmdir()  # empty (checked); rename cannot replace it everywhere
            removed_empty_out = True
        os.replace(tmp, out_dir)
        placed = True
    except BaseException:
        if not placed and tmp is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(tmp)
        if not placed and old is not None and not out_dir.exists():
            with contextlib.suppress(OSError):
                os.replace(old, out_dir)
        elif not placed and removed_empty_out:
            with contextlib.suppress(OSError):
                out_dir.mkdir()
        raise
    if old is not None:
        try:
            shutil.rmtree(old, ignore_errors=True)
        finally:  # interrupted mid-way: the CLI ignores a second signal, so this completes
            shutil.rmtree(old, ignore_errors=True)


def adapt_beir(src: PathLike, out: PathLike, *, split: str = "test",
               overwrite: bool = False, layout: Layout = "rankproof",
               query_ids: QueryIdPolicy = "rename") -> BeirAdaptation:
    """Convert the BEIR folder ``src`` into ``out/docs/*.txt`` + ``out/judgments.jsonl``.

    See the module docstring for the rules. Raises `InputError` (with file,
    line and field) before anything is written; ``out`` must not exist, or be
    an empty directory — or, with ``overwrite``, a previous adaptation
    (exactly ``docs/`` or ``corpus/``, and ``judgments.jsonl``), which is
    replaced as a whole. Any other non-empty folder is never deleted.

    ``layout="groundkit"`` writes the documents to ``out/corpus/`` (groundkit's
    layout) instead of ``out/docs/``; nothing else changes. ``query_ids``:
    ``"rename"`` maps a judged query id that is not kebab-case to one that is
    (original kept in ``source_id``); ``"refuse"`` refuses such ids, listing
    them (groundkit's rule).
    """
    src_dir, out_dir = Path(src), Path(out)
    reason = unsafe_component_reason(split)
    if reason is not None:
        raise InputError(f"split {shown(split)} {reason}", field="split")
    if layout not in DOCS_FOLDER:
        raise InputError(f"layout must be one of {', '.join(DOCS_FOLDER)}, got {shown(layout)}",
                         field="layout")
    if query_ids not in ("rename", "refuse"):
        raise InputError(f"query_ids must be 'rename' or 'refuse', got {shown(query_ids)}",
                         field="query_ids")
    if not src_dir.is_dir():
        raise InputError("expected a BEIR folder", path=str(src_dir))
    _check_out(out_dir, overwrite)
    docs = _read_corpus_rows(src_dir / "corpus.jsonl")
    queries = _read_query_rows(src_dir / "queries.jsonl")
    positives = _read_split(src_dir / "qrels" / f"{split}.tsv", docs, queries)
    if query_ids == "refuse":
        _refuse_renames(positives, queries, src_dir / "queries.jsonl")

    rows = []
    mapped: dict[str, str] = {}
    graded = False
    for qid, judged in positives.items():
        new_id = kebab_query_id(qid)
        if new_id in mapped:
            raise InputError(f"query ids {shown(mapped[new_id])} and {shown(qid)} map to the "
                             f"same kebab-case id {shown(new_id)}",
                             path=str(src_dir / "queries.jsonl"), field="_id")
        mapped[new_id] = qid
        row: dict[str, Any] = {
            "query_id": new_id, "query": queries[qid][1], "category": "normal",
            "gold": [{"doc": portable_stem(d) + DOC_SUFFIX, "quote": docs[d][1]}
                     for d in judged],
            "source_id": qid,
        }
        if any(s > 1 for s in judged.values()):
            graded = True
            row["meta"] = {"grades": {portable_stem(d) + DOC_SUFFIX: s
                                      for d, s in judged.items()}}
        rows.append(row)
    _check_out(out_dir, overwrite)  # again: reading took time, and the folder may have changed
    docs_name = DOCS_FOLDER[layout]
    _write_out(out_dir, {portable_stem(d): v for d, v in docs.items()}, rows, overwrite,
               docs_name)
    return BeirAdaptation(
        out=out_dir, split=split, documents=len(docs), queries=len(rows),
        positives=sum(len(j) for j in positives.values()),
        queries_without_positives=len(queries) - len(positives),
        renamed_queries=sum(1 for new, old in mapped.items() if new != old), graded=graded,
        source=src_dir, docs_dir=out_dir / docs_name, judgments_path=out_dir / JUDGMENTS_FILE,
        characters=sum(len(text) for _, text in docs.values()), layout=layout,
    )


def _refuse_renames(positives: dict[str, dict[str, int]], queries: dict[str, tuple[int, str]],
                    path: Path) -> None:
    """``query_ids="refuse"``: every judged query id must already be kebab-case lowercase."""
    bad = sorted((queries[q][0], q) for q in positives if not QUERY_ID_PATTERN.match(q))
    if bad:
        listed = ", ".join(shown(q) for _, q in bad[:10]) + (" …" if len(bad) > 10 else "")
        raise InputError(
            f"{len(bad)} judged query id(s) are not kebab-case lowercase ([a-z0-9] words "
            f"joined by '-'): {listed}; rename them in the BEIR files, or let the adapter "
            "map them (query_ids='rename', the default)",
            path=str(path), line=bad[0][0], field="_id",
        )
    # groundkit's rule covers every query id, judged or not: one that could not be a single
    # path component is refused even when this split does not judge (or write) it.
    for qid, (line, _) in queries.items():
        reason = None if qid in positives else unsafe_component_reason(qid)
        if reason is not None:
            raise InputError(f"unjudged query id {shown(qid)} {reason}; every query id must "
                             "be a single path component (query_ids='refuse')",
                             path=str(path), line=line, field="_id")
