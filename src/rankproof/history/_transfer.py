"""Moving a history out and in: a per-query table (Arrow, for parquet or CSV) and the
stored documents as JSON Lines records (``{"branch", "document"}``) that `import_records`
adds to another store unchanged, so ids (content addresses) survive the move."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from rankproof._errors import InputError
from rankproof.history._store import HistoryStore

__all__ = ["export_records", "export_table", "import_records", "read_records", "store_records"]

_SCHEMA = pa.schema([("result_id", pa.string()), ("kind", pa.string()),
                     ("created_at", pa.string()), ("git_commit", pa.string()),
                     ("git_branch", pa.string()), ("git_dirty", pa.bool_()),
                     ("run", pa.string()), ("measure", pa.string()), ("qid", pa.string()),
                     ("value", pa.float64())])


def export_table(store: HistoryStore) -> pa.Table:
    """One row per result × run × measure × query, in commit order."""
    batches = []
    for info in store.results():
        for system, measure, qids, values in store.all_series(info):
            n = len(qids)
            batches.append(pa.record_batch([
                pa.array([info.id] * n), pa.array([info.kind] * n),
                pa.array([info.created_at] * n), pa.array([info.git_commit] * n, pa.string()),
                pa.array([info.git_branch] * n, pa.string()),
                pa.array([info.git_dirty] * n, pa.bool_()), pa.array([system] * n),
                pa.array([measure] * n), pa.array(list(qids), pa.string()),
                pa.array(values, pa.float64())], schema=_SCHEMA))
    return pa.Table.from_batches(batches, schema=_SCHEMA)


def export_records(store: HistoryStore) -> Iterator[str]:
    """One JSON line per stored result: its branch and the document as added."""
    for info in store.results():
        yield json.dumps({"branch": info.git_branch, "document": store.document(info)},
                         ensure_ascii=False, separators=(",", ":")) + "\n"


def read_records(path: str) -> Iterator[tuple[str, str | None, Any]]:
    """(label, branch, document) of each line of a JSON Lines export."""
    from rankproof.data import Input, read_document

    with open(path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            label = f"{path}:{n}"
            rec = read_document(Input.from_bytes(line, label), what="history export line")
            if not isinstance(rec, dict) or "document" not in rec:
                raise InputError("expected an object with 'document' (a history export "
                                 "line)", path=path, line=n)
            branch = rec.get("branch")
            yield label, branch if isinstance(branch, str) else None, rec["document"]


def import_records(store: HistoryStore, records: Iterable[tuple[str, str | None, Any]]
                   ) -> tuple[int, int]:
    """Add every record (one transaction each); (added, already stored)."""
    new = old = 0
    for label, branch, doc in records:
        _, added = store.add(doc, label, branch=branch)
        new, old = new + added, old + (not added)
    return new, old


def store_records(source: HistoryStore) -> Iterator[tuple[str, str | None, Any]]:
    """The records of another store, in commit order."""
    for info in source.results():
        yield f"{source.where}:{info.id[:19]}", info.git_branch, source.document(info)
