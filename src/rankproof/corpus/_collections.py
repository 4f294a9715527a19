"""Readers for the classic test collections: Cranfield, CISI (Glasgow format), Vaswani (TREC).

These are small, fully judged collections that let an experiment report real
numbers without a download. Their files have quirks that decide the numbers,
so each is handled explicitly here rather than guessed at:

* **Glasgow / SMART records** (Cranfield, CISI): a record starts with
  ``.I <id>``; fields start with a line ``.T`` (title), ``.A`` (authors),
  ``.B`` (bibliography), ``.W`` (text), ``.X`` (cross-references) and, rarely,
  ``.K`` / ``.C``. A document's text is its title and its ``.W`` text
  separated by a blank line; authors, bibliography and cross-references are
  not text to retrieve on. Cranfield's ``.W`` begins by repeating the title,
  so the title is not added a second time there. Cranfield's files have CRLF
  line ends; they are normalised. Record 240 of ``cran.all.1400`` has stray
  bare ``.A`` and ``.B`` lines inside its ``.W`` text (576 and 578 a second
  ``.W``): a bare marker for a field the record already has, met inside
  another field, is dropped and listed in ``Collection.notes``. CISI repeats
  ``.A`` once per author; that simply continues the field.
* **Queries by position**: Cranfield's qrels number the queries 1..225 by
  their *position* in ``cran.qry``, not by the ``.I`` number (which skips:
  001, 002, 004, 008, ...). Glasgow query ids here are therefore positions,
  as ir_datasets does; ``Collection.query_source_ids`` keeps the ``.I``
  numbers. In CISI both agree (``.I`` runs 1..112).
* **Relevance codes**: a 4-column qrels line (CISI: ``qid docid 0 0.0``)
  marks a relevant pair (rel = 1). A 3-column line (Cranfield:
  ``qid docid code``) carries Cleverdon's code, where **1 is best**
  ("complete answer") and 4 is "minimum interest". Used as gains unchanged,
  nDCG would rank minimum-interest documents highest, so
  :data:`CRANFIELD_GRADES` maps code c to gain ``5 - c`` (1→4, 2→3, 3→2,
  4→1). Code -1 (exactly one row per query) is kept as -1, trec_eval's
  "judged but not relevant either way" (never counted as relevant). Binary
  measures (rel ≥ 1) see the same relevant set either way.
* **Vaswani** (the NPL collection as TREC files): ``<DOC><DOCNO>n</DOCNO>
  text</DOC>`` documents, ``<top><num>n</num><title>TEXT</title></top>``
  queries, and TREC qrels ``qid 0 docno rel``.

A `Collection` holds document-level data only; ``Collection.corpus()``
chunks it and ``Collection.to_judgments()`` restates its positive qrels as
whole-document quotes, for the experiment harness.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof.corpus._corpus import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_OVERLAP,
    Corpus,
    Document,
    normalise_text,
)
from rankproof.corpus._judgments import QUERY_ID_PATTERN, Judgments, parse_judgments
from rankproof.data import Input, Qrels, QrelsRows, int_refusal, parse_int, read_qrels_rows

CollectionName = Literal["cranfield", "cisi", "vaswani"]
COLLECTIONS: tuple[CollectionName, ...] = ("cranfield", "cisi", "vaswani")

#: Cleverdon's codes (1 = complete answer ... 4 = minimum interest) as gains;
#: -1 stays "judged, not relevant". See the module docstring.
CRANFIELD_GRADES: Mapping[int, int] = {1: 4, 2: 3, 3: 2, 4: 1, -1: -1}

_FIELD = re.compile(r"^\.([A-Z])(?:[ \t]+(.*?))?[ \t]*$")
_GLASGOW_FIELDS = frozenset("ITABWXKCN")


@dataclass(frozen=True)
class Collection:
    """A classic collection: documents, queries ``(qid, text)`` and document-level qrels.

    ``query_source_ids`` maps a query id to the id the query has in its own
    file when the two differ (Cranfield's ``.I`` numbers); empty otherwise.
    ``notes`` lists every irregularity the reader tolerated (never silent).
    """

    name: str
    documents: tuple[Document, ...]
    queries: tuple[tuple[str, str], ...]
    qrels: Qrels
    query_source_ids: Mapping[str, str] = field(default_factory=dict, compare=False)
    notes: tuple[str, ...] = ()

    def corpus(
        self, *, chunk_size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_OVERLAP
    ) -> Corpus:
        """The documents as a chunked `Corpus` (``source`` = the collection name)."""
        return Corpus.from_documents(self.documents, chunk_size=chunk_size, overlap=overlap,
                                     source=self.name)

    def to_judgments(self, corpus: Corpus | None = None) -> Judgments:
        """The positive qrels as judgments: each relevant document quoted whole.

        Queries with no positive judgment are left out (they are not
        ``no_answer`` questions: nobody judged them). Grades are not kept —
        judgments are binary — so for a graded collection the qrels of the
        judgments equal ``qrels`` restricted to rel > 0 with rel set to 1.
        Relevant documents with empty text (Cranfield 471 and 995 are empty)
        cannot be quoted and are left out. Query ids that are not kebab-case
        are refused (the classic collections use numbers, which are).
        """
        corpus = corpus if corpus is not None else self.corpus()
        positives: dict[str, list[str]] = {}
        for q, d, r in zip(self.qrels.qids().to_pylist(), self.qrels.docids.to_pylist(),
                           self.qrels.rels.tolist(), strict=True):
            if r > 0 and corpus.document(d).text:
                positives.setdefault(q, []).append(d)
        rows = []
        for qid, text in self.queries:
            if qid not in positives:
                continue
            if not QUERY_ID_PATTERN.match(qid):
                raise InputError(f"query id {qid!r} is not kebab-case", path=self.name,
                                 field="query_id")
            rows.append({
                "query_id": qid, "query": text, "category": "normal",
                "gold": [{"doc": d, "quote": corpus.document(d).text} for d in positives[qid]],
            })
        return Judgments.from_rows(rows, corpus, source=self.name)


# -- Glasgow ------------------------------------------------------------------


def _read_text(path: Path) -> str:
    """The file's text through the one text reader, line ends normalised."""
    return normalise_text(Input.open(path).text())


def _glasgow_records(
    path: Path, notes: list[str]
) -> list[tuple[int, str, dict[str, str]]]:
    """``(line, .I id, {field letter: text})`` per record, in file order.

    Anything tolerated rather than rejected is appended to ``notes``.
    """
    records: list[tuple[int, str, dict[str, list[str]]]] = []
    current: list[str] | None = None
    for lineno, line in enumerate(_read_text(path).split("\n"), start=1):
        m = _FIELD.match(line)
        if m and m.group(1) in _GLASGOW_FIELDS:
            letter, rest = m.group(1), m.group(2)
            if letter == "I":
                if not rest or not rest.strip():
                    raise InputError("a .I line needs a record id", path=str(path), line=lineno,
                                     field=".I")
                records.append((lineno, rest.strip(), {}))
                current = None
                continue
            if not records:
                raise InputError(f"field .{letter} before the first .I record", path=str(path),
                                 line=lineno)
            fields = records[-1][2]
            if letter in fields:
                if current is fields[letter]:
                    # CISI repeats .A once per author: the field continues.
                    if rest:
                        current.append(rest)
                    continue
                if current is None or rest:
                    raise InputError(f"field .{letter} repeated in record {records[-1][1]}",
                                     path=str(path), line=lineno, field=f".{letter}")
                # A bare marker for a field the record already has, inside another
                # field's text (Cranfield record 240 has stray .A and .B lines in its
                # .W): not a new field; the line is dropped and the drop is noted.
                notes.append(f"{path.name} line {lineno}: stray '.{letter}' line inside "
                             f"record {records[-1][1]} dropped")
                continue
            current = fields[letter] = [rest] if rest else []
            continue
        if current is None:
            if line.strip():
                where = "before the first .I record" if not records else "outside any field"
                raise InputError(f"text {where}: {line[:40]!r}", path=str(path), line=lineno)
            continue
        current.append(line)
    seen: dict[str, int] = {}
    out = []
    for lineno, rid, fields in records:
        if rid in seen:
            raise InputError(f"duplicate record id {rid!r} (first on line {seen[rid]})",
                             path=str(path), line=lineno, field=".I")
        seen[rid] = lineno
        out.append((lineno, rid, {k: "\n".join(v).strip() for k, v in fields.items()}))
    if not out:
        raise InputError("no .I records found", path=str(path))
    return out


def _squash(text: str) -> str:
    return " ".join(text.split())


def _glasgow_text(fields: Mapping[str, str]) -> str:
    title, body = fields.get("T", ""), fields.get("W", "")
    if title and _squash(body).startswith(_squash(title)):
        return body  # Cranfield repeats the title at the start of .W
    return "\n\n".join(p for p in (title, body) if p)


def _build_qrels(rows: QrelsRows) -> Qrels:
    if not rows.qids:
        raise InputError("the qrels have no rows", path=rows.source)
    return rows.to_qrels()


def _check_docs(rows: QrelsRows, docids: set[str]) -> None:
    for d, lineno in zip(rows.docids, rows.lines, strict=True):
        if d not in docids:
            raise InputError(f"unknown document {d!r}", path=rows.source, line=lineno,
                             field="docid")


def _read_glasgow_qrels(path: Path, qids: set[str], docids: set[str],
                        grades: Mapping[int, int] | None) -> Qrels:
    rows = QrelsRows(str(path), [], [], [], [])
    for lineno, line in enumerate(_read_text(path).split("\n"), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) == 3:
            parsed = parse_int(parts[2])
            if parsed is None:
                raise InputError(int_refusal("relevance code", parts[2]),
                                 path=str(path), line=lineno, field="rel")
            code = parsed
            if grades is not None:
                if code not in grades:
                    raise InputError(f"relevance code {code} has no mapping (known: "
                                     f"{sorted(grades)})", path=str(path), line=lineno,
                                     field="rel")
                code = grades[code]
        elif len(parts) == 4:
            code = 1  # CISI: every listed pair is relevant; columns 3-4 are always zero
        else:
            raise InputError(f"expected 3 or 4 whitespace-separated columns, found {len(parts)}",
                             path=str(path), line=lineno)
        q, d = _canonical_id(parts[0]), _canonical_id(parts[1])
        if q not in qids:
            raise InputError(f"query {q!r} is not a query position in the queries file "
                             f"(1..{len(qids)})", path=str(path), line=lineno, field="qid")
        if d not in docids:
            raise InputError(f"unknown document {d!r}", path=str(path), line=lineno,
                             field="docid")
        rows.qids.append(q)
        rows.docids.append(d)
        rows.rels.append(code)
        rows.lines.append(lineno)
    return _build_qrels(rows)


def read_glasgow(
    docs_path: PathLike,
    queries_path: PathLike,
    qrels_path: PathLike,
    *,
    name: str = "glasgow",
    grades: Mapping[int, int] | None = None,
) -> Collection:
    """Read a Glasgow-format collection (Cranfield, CISI).

    Document ids are the ``.I`` ids (leading zeros dropped from numeric ids);
    query ids are the queries' 1-based positions in ``queries_path``, because
    that is what the qrels refer to (see the module docstring). ``grades``
    maps 3-column relevance codes to labels (:data:`CRANFIELD_GRADES` for
    Cranfield); without it the codes are used as given.
    """
    docs_file, queries_file, qrels_file = Path(docs_path), Path(queries_path), Path(qrels_path)
    notes: list[str] = []
    documents = tuple(Document(_canonical_id(rid), _glasgow_text(f))
                      for _, rid, f in _glasgow_records(docs_file, notes))
    queries: list[tuple[str, str]] = []
    source_ids: dict[str, str] = {}
    for pos, (lineno, rid, f) in enumerate(_glasgow_records(queries_file, notes), start=1):
        text = _glasgow_text(f)
        if not text:
            raise InputError(f"query {rid!r} has no text", path=str(queries_file), line=lineno)
        queries.append((str(pos), text))
        if _canonical_id(rid) != str(pos):
            source_ids[str(pos)] = rid
    doc_ids = {d.id for d in documents}
    if len(doc_ids) != len(documents):
        raise InputError("document ids collide after dropping leading zeros",
                         path=str(docs_file), field=".I")
    qrels = _read_glasgow_qrels(qrels_file, {q for q, _ in queries}, doc_ids, grades)
    return Collection(name=name, documents=documents, queries=tuple(queries), qrels=qrels,
                      query_source_ids=source_ids, notes=tuple(notes))


def _canonical_id(rid: str) -> str:
    return str(int(rid)) if rid.isascii() and rid.isdigit() else rid


# -- TREC (Vaswani) -----------------------------------------------------------

_DOC = re.compile(r"<DOC>(.*?)</DOC>", re.S)
_DOCNO = re.compile(r"^\s*<DOCNO>\s*(.*?)\s*</DOCNO>", re.S)
_TOP = re.compile(r"<top>(.*?)</top>", re.S)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(.*?)\s*</num>", re.S)
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)


class _LineCounter:
    """Line numbers of increasing offsets, counting each newline once (not O(n²))."""

    def __init__(self, text: str) -> None:
        self._text, self._offset, self._line = text, 0, 1

    def __call__(self, offset: int) -> int:
        self._line += self._text.count("\n", self._offset, offset)
        self._offset = offset
        return self._line


def read_trec_documents(path: PathLike) -> tuple[Document, ...]:
    """``<DOC><DOCNO>id</DOCNO> text </DOC>`` documents (text stripped of surrounding space)."""
    p = Path(path)
    text = _read_text(p)
    docs: list[Document] = []
    seen: dict[str, int] = {}
    line_of = _LineCounter(text)
    for m in _DOC.finditer(text):
        body = m.group(1)
        line = line_of(m.start())
        head = _DOCNO.match(body)
        if head is None:
            raise InputError("a <DOC> without a leading <DOCNO>", path=str(p), line=line,
                             field="DOCNO")
        docno = head.group(1)
        if not docno:
            raise InputError("empty <DOCNO>", path=str(p), line=line, field="DOCNO")
        if docno in seen:
            raise InputError(f"duplicate DOCNO {docno!r} (first on line {seen[docno]})",
                             path=str(p), line=line, field="DOCNO")
        seen[docno] = line
        docs.append(Document(docno, body[head.end():].strip()))
    if not docs:
        raise InputError("no <DOC> records found", path=str(p))
    return tuple(docs)


def read_trec_topics(path: PathLike) -> tuple[tuple[str, str], ...]:
    """``<top><num>n</num><title>text</title></top>`` queries as ``(qid, text)``.

    The title is whitespace-collapsed; Vaswani's titles are upper case and
    kept so (tokenizers lower-case).
    """
    p = Path(path)
    text = _read_text(p)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    line_of = _LineCounter(text)
    for m in _TOP.finditer(text):
        line = line_of(m.start())
        num, title = _NUM.search(m.group(1)), _TITLE.search(m.group(1))
        if num is None or not num.group(1):
            raise InputError("a <top> without <num>", path=str(p), line=line, field="num")
        if title is None or not title.group(1).strip():
            raise InputError("a <top> without a <title>", path=str(p), line=line, field="title")
        qid = num.group(1)
        if qid in seen:
            raise InputError(f"duplicate topic {qid!r}", path=str(p), line=line, field="num")
        seen.add(qid)
        out.append((qid, _squash(title.group(1))))
    if not out:
        raise InputError("no <top> records found", path=str(p))
    return tuple(out)


def _read_trec_qrels_checked(path: Path, qids: set[str], docids: set[str]) -> Qrels:
    """TREC qrels, parsed by `rankproof.data`, each row checked against the collection."""
    rows = read_qrels_rows(path, format="trec", allow_empty=True)
    for q, lineno in zip(rows.qids, rows.lines, strict=True):
        if q not in qids:
            raise InputError(f"unknown query {q!r}", path=rows.source, line=lineno,
                             field="qid")
    _check_docs(rows, docids)
    return _build_qrels(rows)


def read_vaswani(folder: PathLike) -> Collection:
    """Read the Vaswani (NPL) collection from Terrier's TREC files.

    ``folder`` holds ``doc-text.trec`` (a ``corpus/`` subfolder, Terrier's
    own layout, also works), ``query-text.trec`` and ``qrels``.
    """
    root = Path(folder)
    docs_file = root / "doc-text.trec"
    if not docs_file.is_file() and (root / "corpus" / "doc-text.trec").is_file():
        docs_file = root / "corpus" / "doc-text.trec"
    documents = read_trec_documents(docs_file)
    queries = read_trec_topics(root / "query-text.trec")
    qrels = _read_trec_qrels_checked(root / "qrels", {q for q, _ in queries},
                                     {d.id for d in documents})
    return Collection(name="vaswani", documents=documents, queries=queries, qrels=qrels)


def load_collection(name: str, root: PathLike) -> Collection:
    """Load ``cranfield``, ``cisi`` or ``vaswani`` from ``root/<name>/`` (its usual file names).

    ``root`` is the folder holding one sub-folder per collection (the
    repository's ``../shared/data``).
    """
    folder = Path(root) / name
    if name == "cranfield":
        return read_glasgow(folder / "cran.all.1400", folder / "cran.qry",
                            folder / "cranqrel", name="cranfield", grades=CRANFIELD_GRADES)
    if name == "cisi":
        return read_glasgow(folder / "CISI.ALL", folder / "CISI.QRY", folder / "CISI.REL",
                            name="cisi")
    if name == "vaswani":
        return read_vaswani(folder)
    raise InputError(f"unknown collection {name!r}; expected one of {', '.join(COLLECTIONS)}",
                     field="name")


# -- the bundled golden corpus ------------------------------------------------

GOLDEN_SOURCE = "rankproof:golden"


def golden_corpus(
    *, chunk_size: int = DEFAULT_CHUNK_SIZE, overlap: int = DEFAULT_OVERLAP
) -> tuple[Corpus, Judgments]:
    """The bundled golden corpus and its judgments (package data ``rankproof/golden``).

    An operations handbook of a fictional water utility, written for
    rankproof: Markdown documents and judged queries in all four categories
    (at least 40 and 60, a floor the tests assert; counts and the planted
    prompt-injection documents are described in ``golden/README.md``). It is
    the default corpus of ``rankproof eval``, so that the main command runs
    offline from a clean clone.

    Files are read through :mod:`importlib.resources` (they may sit inside a
    wheel or zip rather than on disk), with the same rules as
    :func:`read_corpus`: ids are ``<name>.md``, texts normalised, nothing else
    touched — planted instructions are returned verbatim, as data.
    """
    root = resources.files("rankproof") / "golden"
    docs = []
    for entry in sorted((e for e in (root / "docs").iterdir()
                         if e.is_file() and e.name.endswith(".md")
                         and not e.name.startswith(".")), key=lambda e: e.name):
        text = Input.from_bytes(entry.read_bytes(), f"{GOLDEN_SOURCE}/docs/{entry.name}").text()
        docs.append(Document(entry.name, normalise_text(text)))
    corpus = Corpus.from_documents(docs, chunk_size=chunk_size, overlap=overlap,
                                   source=GOLDEN_SOURCE)
    judgments = parse_judgments((root / "judgments.jsonl").read_bytes(), corpus,
                                source=f"{GOLDEN_SOURCE}/judgments.jsonl")
    return corpus, judgments
