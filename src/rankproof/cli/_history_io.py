"""Writing a history export and reading an import source (a file or another store)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from rankproof._io import atomic_write


def export_history(store: Any, output: Path, fmt: str) -> int:
    """Write the export atomically; how many rows (or documents) it holds."""
    from rankproof.history import export_records, export_table

    if fmt == "jsonl":
        lines = list(export_records(store))
        with atomic_write(output) as fh:
            fh.writelines(lines)
        return len(lines)
    table = export_table(store)
    buf = io.BytesIO()
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, buf)
    else:
        import pyarrow.csv as pcsv

        pcsv.write_csv(table, buf)
    with atomic_write(output, "wb", encoding=None) as fh:
        fh.write(buf.getvalue())
    return int(table.num_rows)


def import_history(store: Any, source: str) -> tuple[int, int]:
    """Import a JSON Lines export or every result of another store."""
    from rankproof.history import import_records, open_store, read_records, store_records

    if "://" not in source and Path(source).is_file() and not _is_sqlite(source):
        return import_records(store, read_records(source))
    with open_store(source) as other:
        return import_records(store, store_records(other))


def _is_sqlite(path: str) -> bool:
    with open(os.fspath(path), "rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"
