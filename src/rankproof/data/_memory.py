"""`as_run` / `as_qrels`: whatever a caller holds in memory, as a `Run` / `Qrels`.

Users arrive from pytrec_eval and ranx with ``{qid: {docid: score}}`` dicts,
from ir_measures and pandas with DataFrames, from Arrow with Tables. Every
library entry point that takes a run or qrels goes through these, so each
accepts the same things and refuses anything else with one typed error
(never an ``AttributeError`` from deep inside).

pandas is not imported here: a DataFrame can only exist if the caller
already imported pandas, so it is recognised through ``sys.modules``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any

from rankproof._errors import InputError
from rankproof.data._frames import (
    qrels_from_arrow,
    qrels_from_pandas,
    run_from_arrow,
    run_from_pandas,
)
from rankproof.data._model import Dedupe, Qrels, Run

_ACCEPTED = ("a {kind}, a {{qid: {{docid: {value}}}}} dict, a pandas DataFrame or a pyarrow "
             "Table")


def _is_dataframe(obj: Any) -> bool:
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(obj, pandas.DataFrame)


def _is_arrow(obj: Any) -> bool:
    pyarrow = sys.modules.get("pyarrow")
    return pyarrow is not None and isinstance(obj, pyarrow.Table | pyarrow.RecordBatch)


def _refuse(obj: Any, kind: str, value: str) -> InputError:
    accepted = _ACCEPTED.format(kind=kind, value=value)
    return InputError(f"expected {accepted}, found {type(obj).__module__}."
                      f"{type(obj).__qualname__}")


def as_run(obj: Any, *, name: str | None = None, dedupe: Dedupe | None = None) -> Run:
    """``obj`` as a `Run`.

    Accepts a `Run` (returned as is, renamed when ``name`` is given), a
    ``{qid: {docid: score}}`` mapping (the pytrec_eval / ranx shape), a pandas
    DataFrame or a pyarrow Table with qid, docid and score columns (ranx's
    ``q_id``/``doc_id`` and ir_measures' ``query_id``/``doc_id`` too; a
    ``rank`` column is kept). Anything else is an `InputError`.
    """
    if isinstance(obj, Run):
        return obj if name is None or name == obj.name else dataclasses.replace(obj, name=name)
    run_name = name if name is not None else "run"
    if isinstance(obj, Mapping):
        return Run.from_dict(obj, name=run_name, dedupe=dedupe)
    if _is_dataframe(obj):
        return run_from_pandas(obj, name=run_name, dedupe=dedupe)
    if _is_arrow(obj):
        return run_from_arrow(obj, name=run_name, dedupe=dedupe)
    raise _refuse(obj, "Run", "score")


def as_qrels(obj: Any, *, dedupe: Dedupe | None = None) -> Qrels:
    """``obj`` as `Qrels`: a `Qrels` (as is), a ``{qid: {docid: rel}}`` mapping,
    a pandas DataFrame or a pyarrow Table with qid, docid and rel (or
    ``relevance``, or BEIR's ``score``) columns. Anything else is an `InputError`.
    """
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, Mapping):
        return Qrels.from_dict(obj)  # a dict cannot hold a duplicate pair: no dedupe
    if _is_dataframe(obj):
        return qrels_from_pandas(obj, dedupe=dedupe)
    if _is_arrow(obj):
        return qrels_from_arrow(obj, dedupe=dedupe)
    raise _refuse(obj, "Qrels", "rel")
