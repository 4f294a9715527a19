"""pandas and pyarrow interop: tables in, `Run` and `Qrels` out.

The other direction is ``Run.to_pandas()`` / ``to_arrow()`` (and the same on
`Qrels`). Column names are matched against the spellings the field uses:

======== ================================= ==================
role     accepted names                    from
======== ================================= ==================
qid      ``qid``, ``query_id``, ``query-id``, rankproof, ir_measures, BEIR,
         ``q_id``                          ranx
docid    ``docid``, ``doc_id``, ``corpus-id`` rankproof, ir_measures, BEIR
score    ``score``                         all three (runs)
rank     ``rank`` (optional)               TREC
rel      ``rel``, ``relevance``, ``score`` rankproof, ir_measures, BEIR (qrels)
======== ================================= ==================

``columns={"qid": "topic", ...}`` names them explicitly instead. Other
columns are ignored: frames often carry text or features beside the ids.

pandas stays optional: it is imported only inside the pandas functions, and
a pandas frame goes column by column to Arrow, where the checks live. A frame
has no lines, so errors name the column (``field``) and the row position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rankproof._errors import InputError
from rankproof.data._model import Dedupe, Qrels, Run
from rankproof.data._strings import to_numpy

# Per role: groups of accepted names, in order of preference. Two names from
# one group present at once is ambiguous; a later group is only consulted
# when no earlier one matched (BEIR's qrels call the label "score").
_QID = (("qid", "query_id", "query-id", "q_id"),)
_DOCID = (("docid", "doc_id", "corpus-id"),)
_SCORE = (("score",),)
_RANK = (("rank",),)
_REL = (("rel", "relevance"), ("score",))


def _resolve(
    available: Sequence[str], role: str, groups: tuple[tuple[str, ...], ...],
    columns: Mapping[str, str] | None, required: bool = True, note: str = "",
) -> str | None:
    """The column that plays ``role``, or None for a missing optional role."""
    if columns and role in columns:
        name = columns[role]
        if name not in available:
            raise InputError(f"column {name!r} (given for {role}) not found; "
                             f"columns are {list(available)}", field=name)
        return name
    for group in groups:
        present = [c for c in group if c in available]
        if len(present) == 1:
            return present[0]
        if len(present) > 1:
            raise InputError(
                f"columns {present} could all be the {role}; pass columns={{'{role}': ...}} "
                "to choose", field=role,
            )
    if not required:
        return None
    accepted = [c for group in groups for c in group]
    raise InputError(
        f"no {role} column: expected one of {accepted}, found columns {list(available)}"
        f"{note}; pass columns={{'{role}': ...}} to name it", field=role,
    )


def _row_of(mask: pa.Array) -> int:
    return int(np.flatnonzero(to_numpy(mask))[0])


def _combine(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 0:
            return pa.array([], type=values.type)
        return values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    return values


def _no_nulls(arr: pa.Array, name: str) -> None:
    if arr.null_count:
        row = _row_of(pc.is_null(arr))
        raise InputError(f"missing value in column {name!r} at row {row}", field=name)


def _text_bytes(arr: pa.Array) -> int:
    return int(pc.sum(pc.binary_length(arr)).as_py() or 0)


def _ids(values: pa.Array | pa.ChunkedArray, name: str) -> pa.Array:
    """A string (or dictionary-of-string) id column; integer ids become their text."""
    arr = _combine(values)
    _no_nulls(arr, name)
    kind = arr.type.value_type if pa.types.is_dictionary(arr.type) else arr.type
    if pa.types.is_large_string(arr.type) and _text_bytes(arr) < 2**31:
        # pandas >= 3 hands over large_string; the readers produce string. One
        # type whatever the source keeps tables from different inputs equal.
        return arr.cast(pa.string())
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return arr
    if pa.types.is_integer(kind):
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        return arr.cast(pa.string())
    hint = (" (a float id column usually means missing values turned integer ids into "
            "floats)" if pa.types.is_floating(kind) else "")
    raise InputError(f"column {name!r} must hold strings or integers, found {arr.type}{hint}",
                     field=name)


def _numbers(values: pa.Array | pa.ChunkedArray, name: str, what: str) -> pa.Array:
    arr = _combine(values)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)
            or pa.types.is_decimal(arr.type)):
        raise InputError(f"column {name!r} ({what}) must be numeric, found {arr.type}",
                         field=name)
    _no_nulls(arr, name)
    return arr


def _scores(values: pa.Array | pa.ChunkedArray, name: str) -> npt.NDArray[np.float64]:
    arr = _numbers(values, name, "score")
    out = to_numpy(arr.cast(pa.float64()))
    finite = np.isfinite(out)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise InputError(f"score must be a finite number, found {out[row]!r} at row {row}",
                         field=name)
    return np.ascontiguousarray(out, dtype=np.float64)


def _integers(values: pa.Array | pa.ChunkedArray, name: str, what: str) -> npt.NDArray[np.int64]:
    """An int64 column; floats are accepted when every value is a whole number."""
    arr = _numbers(values, name, what)
    if pa.types.is_integer(arr.type):
        if arr.type == pa.uint64() and len(arr) and pc.max(arr).as_py() > 2**63 - 1:
            row = _row_of(pc.greater(arr, 2**63 - 1))
            raise InputError(f"{what} at row {row} does not fit in 64 bits", field=name)
        return np.ascontiguousarray(to_numpy(arr.cast(pa.int64())), dtype=np.int64)
    floats = to_numpy(arr.cast(pa.float64()))
    bad = ~np.isfinite(floats) | (floats != np.round(floats)) | (np.abs(floats) > 2.0**63 - 1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what} must be an integer, found {floats[row]!r} at row {row}",
                         field=name)
    return floats.astype(np.int64)


def _as_table(data: Any) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    try:
        # Anything speaking the Arrow C stream protocol (polars, duckdb, ...).
        return pa.table(data)
    except (TypeError, ValueError, pa.ArrowInvalid) as exc:
        raise TypeError(f"expected a pyarrow Table or RecordBatch, got {type(data).__name__}"
                        ) from exc


def _pandas_columns(df: Any, wanted: Sequence[str]) -> dict[str, pa.Array]:
    """The ``wanted`` columns of a pandas DataFrame as Arrow arrays, checked one by one."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
    out: dict[str, pa.Array] = {}
    for name in wanted:
        series = df[name]
        if isinstance(series, pd.DataFrame):
            raise InputError(f"column {name!r} appears more than once", field=name)
        try:
            out[name] = pa.array(series, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"column {name!r} cannot be read ({exc}); mixed types?",
                             field=name) from None
    return out


def _pandas_names(df: Any) -> tuple[list[str], str]:
    """String column names, and a note naming the index levels for error messages."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
    names = [c for c in df.columns if isinstance(c, str)]
    levels = [n for n in df.index.names if n is not None]
    # A frame indexed by qid is a common near-miss: say so in the error.
    note = f" (and index levels {levels}; try df.reset_index())" if levels else ""
    return names, note


def _run(
    get: Mapping[str, pa.Array | pa.ChunkedArray], picked: dict[str, str | None], *,
    name: str, dedupe: Dedupe | None, source: str | None,
) -> Run:
    qid_col, doc_col, score_col, rank_col = (picked[k] for k in ("qid", "docid", "score", "rank"))
    assert qid_col is not None and doc_col is not None and score_col is not None
    qids = _ids(get[qid_col], qid_col)
    docids = _ids(get[doc_col], doc_col)
    scores = _scores(get[score_col], score_col)
    ranks = _integers(get[rank_col], rank_col, "rank") if rank_col is not None else None
    return Run.from_columns(qids, docids, scores, ranks, name=name, source=source,
                            dedupe=dedupe)


def _qrels(
    get: Mapping[str, pa.Array | pa.ChunkedArray], picked: dict[str, str | None], *,
    dedupe: Dedupe | None, source: str | None,
) -> Qrels:
    qid_col, doc_col, rel_col = (picked[k] for k in ("qid", "docid", "rel"))
    assert qid_col is not None and doc_col is not None and rel_col is not None
    return Qrels.from_columns(
        _ids(get[qid_col], qid_col), _ids(get[doc_col], doc_col),
        _integers(get[rel_col], rel_col, "relevance"), source=source, dedupe=dedupe,
    )


def _pick_run(
    available: Sequence[str], columns: Mapping[str, str] | None, note: str = ""
) -> dict[str, str | None]:
    return {
        "qid": _resolve(available, "qid", _QID, columns, note=note),
        "docid": _resolve(available, "docid", _DOCID, columns, note=note),
        "score": _resolve(available, "score", _SCORE, columns, note=note),
        "rank": _resolve(available, "rank", _RANK, columns, required=False),
    }


def _pick_qrels(
    available: Sequence[str], columns: Mapping[str, str] | None, note: str = ""
) -> dict[str, str | None]:
    return {
        "qid": _resolve(available, "qid", _QID, columns, note=note),
        "docid": _resolve(available, "docid", _DOCID, columns, note=note),
        "rel": _resolve(available, "rel", _REL, columns, note=note),
    }


def run_from_arrow(
    table: Any, *, name: str = "run", dedupe: Dedupe | None = None,
    columns: Mapping[str, str] | None = None, source: str | None = None,
) -> Run:
    """A `Run` from a pyarrow Table (or RecordBatch, or any Arrow stream source).

    Needs qid, docid and score columns (see the module docstring for the
    accepted names); a ``rank`` column is kept when present.
    """
    tbl = _as_table(table)
    picked = _pick_run(tbl.column_names, columns)
    get = {c: tbl.column(c) for c in picked.values() if c is not None}
    return _run(get, picked, name=name, dedupe=dedupe, source=source)


def qrels_from_arrow(
    table: Any, *, dedupe: Dedupe | None = None,
    columns: Mapping[str, str] | None = None, source: str | None = None,
) -> Qrels:
    """`Qrels` from a pyarrow Table (or RecordBatch): qid, docid and rel columns."""
    tbl = _as_table(table)
    picked = _pick_qrels(tbl.column_names, columns)
    get = {c: tbl.column(c) for c in picked.values() if c is not None}
    return _qrels(get, picked, dedupe=dedupe, source=source)


def run_from_pandas(
    df: Any, *, name: str = "run", dedupe: Dedupe | None = None,
    columns: Mapping[str, str] | None = None, source: str | None = None,
) -> Run:
    """A `Run` from a pandas DataFrame with qid, docid, score (and rank) columns.

    Accepts ``run.to_pandas()`` output, ir_measures' ``query_id``/``doc_id``
    frames and BEIR-style ``query-id``/``corpus-id`` frames. The index is
    ignored.
    """
    names, note = _pandas_names(df)
    picked = _pick_run(names, columns, note)
    get = _pandas_columns(df, [c for c in picked.values() if c is not None])
    return _run(get, picked, name=name, dedupe=dedupe, source=source)


def qrels_from_pandas(
    df: Any, *, dedupe: Dedupe | None = None,
    columns: Mapping[str, str] | None = None, source: str | None = None,
) -> Qrels:
    """`Qrels` from a pandas DataFrame with qid, docid and rel (or ``relevance``,
    or BEIR's ``score``) columns. Labels must be whole numbers."""
    names, note = _pandas_names(df)
    picked = _pick_qrels(names, columns, note)
    get = _pandas_columns(df, [c for c in picked.values() if c is not None])
    return _qrels(get, picked, dedupe=dedupe, source=source)
