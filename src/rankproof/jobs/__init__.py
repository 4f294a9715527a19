"""File-level verbs over typed requests: what the command line, experiment files and the
engine's tasks call.

A verb takes a frozen request built from the settings types of the floors below
(`rankproof.data.ReadOptions`, `rankproof.measures.EvalOptions`) and returns a result
object; it parses no arguments and prints nothing (a note goes to the caller's
``notify`` and into the result). ``rankproof measure`` and ``rankproof compare`` are
adapters over `measure_files` and `compare_files`:

>>> from rankproof.jobs import RunFilesRequest, measure_files
>>> from rankproof.measures import resolve_measures
>>> request = RunFilesRequest(qrels="qrels.txt", runs=("bm25.run",),
...                           measures=resolve_measures(["nDCG@10 RR@10"]))  # doctest: +SKIP
>>> measure_files(request).tables["bm25"].mean("nDCG@10")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankproof.jobs._capped import should_stream
from rankproof.jobs._naming import STDIN, check_names, check_stdin, run_names, unique_labels
from rankproof.jobs._run_files import (
    Note,
    Notify,
    RunFileResult,
    RunFilesRequest,
    RunFilesResult,
    RunFileTask,
    evaluate_run_file,
    measure_files,
    nothing_left,
    trec_eval_limited,
)

if TYPE_CHECKING:
    from rankproof.jobs._compare_files import (
        CompareFilesRequest,
        CompareFilesResult,
        compare_files,
    )

_LAZY = frozenset({"CompareFilesRequest", "CompareFilesResult", "compare_files"})
"""Loaded on first use: a comparison brings scipy, which ``rankproof measure`` never needs."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from rankproof.jobs import _compare_files

        return getattr(_compare_files, name)
    raise AttributeError(f"module 'rankproof.jobs' has no attribute {name!r}")


__all__ = [
    "STDIN",
    "CompareFilesRequest",
    "CompareFilesResult",
    "Note",
    "Notify",
    "RunFileResult",
    "RunFileTask",
    "RunFilesRequest",
    "RunFilesResult",
    "check_names",
    "check_stdin",
    "compare_files",
    "evaluate_run_file",
    "measure_files",
    "nothing_left",
    "run_names",
    "should_stream",
    "trec_eval_limited",
    "unique_labels",
]
