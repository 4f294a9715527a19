"""MS MARCO's three-column run: ``qid<TAB>docid<TAB>rank`` per line, rank 1 best.

The MS MARCO passage and document leaderboards (and the tools built around
them, e.g. Pyserini's ``--output-format msmarco``) write runs without scores.
A `Run` is ordered by score, so the score is derived from the rank:
``score = -rank``, which puts rank 1 first and keeps the order exactly;
the rank column itself is kept, so ``order="rank"`` sees the file's ranks.

Fields are whitespace-separated like TREC's (one tab in practice) and the
same two paths read them: Arrow for the plain file, the careful line-by-line
tokenizer for anything else and for every error message.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rankproof._errors import InputError
from rankproof._io import PathLike, atomic_write
from rankproof.data._model import Dedupe, Run
from rankproof.data._text import ExtraColumns, Input, default_run_name, line_locator
from rankproof.data._trec import (
    _check_trec_ids,
    _contiguous,
    _fast_table,
    _Lines,
    _parse_int,
    int_refusal,
    lazy_line_locator,
)

MSMARCO_COLUMNS = ("qid", "docid", "rank")


def is_msmarco_line(line: bytes) -> bool:
    """Whether a (stripped) data line looks like ``qid docid rank``: three fields,
    the third an integer. TREC lines have four or six, BEIR's header has text."""
    parts = line.split()
    return len(parts) == 3 and _parse_int(parts[2].decode("ascii", "replace")) is not None


def _scores(ranks: np.ndarray) -> np.ndarray:
    return -ranks.astype(np.float64)


def read_msmarco_run(
    path: PathLike | Input,
    *,
    name: str | None = None,
    dedupe: Dedupe | None = None,
    extra_columns: ExtraColumns = "error",
) -> Run:
    """Read an MS MARCO run (``qid docid rank``); scores are ``-rank`` (see the module
    docstring). ``extra_columns="ignore"`` accepts trailing columns."""
    src = Input.open(path)
    source = src.label
    run_name = name if name is not None else default_run_name(source)
    types = {"qid": pa.dictionary(pa.int32(), pa.string()), "docid": pa.string(),
             "rank": pa.int64()}
    columns = _contiguous(_fast_table(src, MSMARCO_COLUMNS, types, extra_columns))
    if columns is not None:
        ranks = columns.pop("rank")
        try:
            return Run.from_columns(columns.pop("qid"), columns.pop("docid"), _scores(ranks),
                                    ranks, name=run_name, source=source, dedupe=dedupe,
                                    locator=lazy_line_locator(src, MSMARCO_COLUMNS))
        except InputError as exc:
            # As for TREC runs: the fast rows are the careful path's, so its refusal
            # (a duplicate, an empty id) is raised now, located by the newline scan;
            # only standard input, which has no locator, is parsed again to name the line.
            if exc.line is not None:
                raise
    rows, lines = _Lines(src, MSMARCO_COLUMNS, extra_columns).rows()
    ranks = np.empty(len(rows), dtype=np.int64)
    for i, row in enumerate(rows):
        rank = _parse_int(row[2])
        if rank is None:
            raise InputError(int_refusal("rank", row[2]), path=source, line=lines[i],
                             field="rank")
        ranks[i] = rank
    return Run.from_columns(
        [r[0] for r in rows], [r[1] for r in rows], _scores(ranks), ranks,
        name=run_name, source=source, dedupe=dedupe, locator=line_locator(lines),
    )


def write_msmarco_run(run: Run, path: PathLike) -> None:
    """Write ``qid<TAB>docid<TAB>rank`` in trec_eval's order, ranks from 1, atomically.

    Scores are not kept (the format has none): reading the file back gives
    ``-rank`` scores in the same order.
    """
    from rankproof.data._order import ranked_order

    _check_trec_ids(run.qid_vocab, run.docids, path)
    order = ranked_order(run)
    rows = order.row_ids(len(run))
    qids = run.qids().take(pa.array(rows)).to_pylist()
    docids = run.docids.take(pa.array(rows)).to_pylist()
    ranks = (order.positions + 1).tolist()
    with atomic_write(path) as fh:
        for q, d, r in zip(qids, docids, ranks, strict=True):
            fh.write(f"{q}\t{d}\t{r}\n")
