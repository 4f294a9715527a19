"""`read_queries`: the text of each query, for the evidence a report stores.

Runs and qrels hold query ids only; a reader of a regression wants the question that was
asked. Two layouts are read, told apart by the first non-blank line:

* a TREC topics file, ``qid<TAB>text`` per line (as TREC DL and MS MARCO distribute
  them: ``topics.dl19-passage.txt``);
* JSON Lines with the id under ``query_id``, ``qid`` or ``_id`` (BEIR's
  ``queries.jsonl``) and the text under ``query`` or ``text`` (rankproof's judgments files
  qualify); other keys are ignored.

Gzip and ``-`` work as for every input (`rankproof.data.Input`); ``irds:ID`` names an
ir_datasets dataset's queries, read from its local cache only. A line without a tab, an
empty id, a blank text or an id given twice is refused naming the file and the line.
"""

from __future__ import annotations

from typing import Any

from rankproof._errors import InputError
from rankproof._io import PathLike
from rankproof._limits import shown
from rankproof.data import Input, irds_queries, is_irds, read_jsonl

_ID_KEYS = ("query_id", "qid", "_id")
_TEXT_KEYS = ("query", "text")


def _one(row: dict[str, Any], keys: tuple[str, ...], what: str, label: str,
         line: int) -> tuple[str, Any]:
    present = [k for k in keys if k in row]
    if not present:
        raise InputError(f"no {what} (expected one of {', '.join(keys)})", path=label,
                         line=line)
    if len(present) > 1:
        raise InputError(f"two {what} keys ({', '.join(present)}); give one", path=label,
                         line=line, field=present[1])
    return present[0], row[present[0]]


def _add(out: dict[str, str], seen: dict[str, int], qid: str, text: str, label: str,
         line: int, fields: tuple[str, str] | None = None) -> None:
    id_field, text_field = fields or (None, None)
    if not qid:
        raise InputError("empty query id", path=label, line=line, field=id_field)
    if qid in seen:
        raise InputError(f"query {shown(qid, 60)} is given twice (first on line {seen[qid]})",
                         path=label, line=line, field=id_field)
    if not text.strip():
        raise InputError(f"query {shown(qid, 60)} has no text", path=label, line=line,
                         field=text_field)
    seen[qid] = line
    out[qid] = text


def read_queries(path: PathLike | Input) -> dict[str, str]:
    """``{qid: text}`` from a TREC topics file or JSON Lines (see the module docstring).

    ``irds:ID`` reads an ir_datasets dataset's queries from its local cache, never
    downloading (`rankproof.data.irds_queries`).
    """
    if is_irds(path):
        label = str(path)
        out_irds: dict[str, str] = {}
        seen_irds: dict[str, int] = {}
        for record, (qid, text) in enumerate(irds_queries(str(path)), 1):
            _add(out_irds, seen_irds, qid.strip(), text.strip(), label, record)
        if not out_irds:
            raise InputError("the dataset holds no queries", path=label)
        return out_irds
    src = Input.open(path, what="the queries file")
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    if src.first_data_line().startswith(b"{"):
        for line, row in read_jsonl(src):
            id_key, qid = _one(row, _ID_KEYS, "query id", src.label, line)
            text_key, text = _one(row, _TEXT_KEYS, "query text", src.label, line)
            if isinstance(qid, int) and not isinstance(qid, bool):
                qid = str(qid)
            if not isinstance(qid, str):
                raise InputError(f"the query id must be a string, found {shown(qid, 60)}",
                                 path=src.label, line=line, field=id_key)
            if not isinstance(text, str):
                raise InputError(f"the query text must be a string, found {shown(text, 60)}",
                                 path=src.label, line=line, field=text_key)
            _add(out, seen, qid, text, src.label, line, (id_key, text_key))
    else:
        for line, raw in enumerate(src.lines(), 1):
            if not raw.strip():
                continue
            qid, tab, text = raw.partition("\t")
            if not tab:
                raise InputError("expected 'qid<TAB>text' (a TREC topics line), found no tab",
                                 path=src.label, line=line)
            _add(out, seen, qid.strip(), text.strip(), src.label, line)
    if not out:
        raise InputError("the queries file holds no queries", path=src.label)
    return out
