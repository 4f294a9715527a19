"""``--memory-cap``: a run larger than memory, evaluated in partitions of whole topics.

``rankproof measure QRELS RUN --memory-cap 64MiB`` (or ``RANKPROOF_MEMORY_CAP``)
evaluates a run whose estimated in-memory size exceeds the cap by streaming
it (`rankproof.data.stream_run`, `rankproof.measures.evaluate_partitions`):
the output is the one the in-memory evaluation prints, byte for byte, and a
note on standard error says that the run was streamed and in how many
partitions. A run under the cap is read whole, as without the option.

The sizes, measured on this project's machine (``benchmarks/bench_stream.py``,
``docs/scaling.md``):

* a TREC run read whole peaks at about 1.35 times its text above the
  process's post-import size; it is streamed when ``IN_MEMORY_FACTOR`` (1.5)
  times its text exceeds the cap;
* a partition holds ``cap / PARTITION_SHARE`` (1/16) of run text; while one is
  in flight the process holds about 6 to 7 times that (the text and its read
  buffer, its parse, Arrow's buffers, the allocator's slack): under half the cap;
* on top of both, any evaluation pays once for the code and tables that Arrow
  and numpy page in at first use (roughly 40 to 70 MiB resident here, in
  memory or streamed alike), which no cap can shrink. So the peak above the
  post-import size stays under ``cap + MEMORY_MARGIN`` (64 MiB): measured 65
  MiB for the 290 MB benchmark run under a 64 MiB cap, 134 MiB under 256 MiB,
  and 91 MiB for the 120 MiB run of the test under 64 MiB (against 379 and
  438 MiB in memory).

The run must be grouped by topic (``LC_ALL=C sort -s -k1,1 RUN``); a topic
larger than one partition is refused with the cap it would need.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import typer

from rankproof._errors import InputError

if TYPE_CHECKING:
    from rankproof.cli._many import RunFileResult, RunFileTask

MEMORY_CAP_ENV = "RANKPROOF_MEMORY_CAP"
IN_MEMORY_FACTOR = 1.5
PARTITION_SHARE = 16
MEMORY_MARGIN = 64 << 20
"""What the peak may exceed the cap by, above the post-import size (see the docstring)."""
_MIN_PARTITION = 64 << 10
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 10**3, "m": 1 << 20,
          "mib": 1 << 20, "mb": 10**6, "g": 1 << 30, "gib": 1 << 30, "gb": 10**9,
          "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*")


def parse_size(text: str) -> int:
    """Bytes in ``512MiB``, ``2GiB``, ``64M`` (binary), ``500MB`` (decimal) or ``1048576``."""
    match = _SIZE.fullmatch(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise typer.BadParameter(f"expected a size such as 512MiB, 2GiB or 64M, found {text!r}",
                                 param_hint="'--memory-cap'")
    size = int(float(match.group(1)) * _UNITS[unit])
    if size < 1 << 20:
        raise typer.BadParameter(f"{text!r} is under 1 MiB: too small to evaluate anything in",
                                 param_hint="'--memory-cap'")
    return size


def memory_cap_option() -> Any:
    return typer.Option(
        None, "--memory-cap", metavar="SIZE", envvar=MEMORY_CAP_ENV,
        help="Evaluate a run larger than this (512MiB, 2GiB) by streaming it in partitions "
             "of whole topics, in bounded memory, with identical output; the run must be "
             f"grouped by topic (sort -s -k1,1). Default: ${MEMORY_CAP_ENV}, else no cap.")


def partition_bytes(cap: int) -> int:
    """The run text one partition holds under ``cap`` (see the module docstring)."""
    return max(_MIN_PARTITION, cap // PARTITION_SHARE)


def should_stream(path: str, cap: int | None) -> bool:
    """Whether the run at ``path`` is streamed under ``cap``: a Parquet run always (the
    command reads Parquet no other way), a text run when its estimated in-memory size
    exceeds the cap. Standard input and pipes (size unknown) are read whole."""
    from rankproof.data import RunPartitions, run_size

    if cap is None or path == "-":
        return False
    size = run_size(path)
    if size is None:
        return False
    if RunPartitions(path).kind != "trec":
        return True
    return size * IN_MEMORY_FACTOR > cap


def evaluate_capped(task: RunFileTask, cap: int) -> RunFileResult | None:
    """`rankproof.cli._many.evaluate_run_file` for a run streamed under ``cap``, or None
    when the run is read whole (`should_stream`)."""
    from rankproof.cli._many import RunFileResult
    from rankproof.data import sniff_format, stream_run
    from rankproof.measures import evaluate_partitions

    path = str(task.run)
    if not should_stream(path, cap):
        return None
    parts = stream_run(path, partition_bytes=partition_bytes(cap), dedupe=task.dedupe,  # type: ignore[arg-type]
                       extra_columns=task.extra_columns)  # type: ignore[arg-type]
    if parts.kind == "trec" and (fmt := sniff_format(path)) != "trec":
        raise InputError(f"the run is {fmt}, and a run over --memory-cap is streamed, which "
                         "reads TREC runs and Parquet files or datasets: convert it (rankproof "
                         "export) or raise --memory-cap", path=path)
    if task.evidence_depth:
        raise InputError("evidence (top documents per topic) needs the run in memory, and "
                         "this run is over --memory-cap", path=path)
    kept = _trec_eval_partitions(parts, task) if (
        task.max_retrieved is not None or task.judged_only) else parts
    pq = evaluate_partitions(task.qrels, kept, task.measures, rel_level=task.rel_level,
                             topics=task.topics, order=task.order)  # type: ignore[arg-type]
    s = parts.stats
    note = (f"streamed under --memory-cap {_mib(cap)}: {s.partitions} partition(s) of whole "
            f"topics, at most {_mib(partition_bytes(cap))} of run text each (largest "
            f"{_mib(s.largest)}), {s.rows:,} rows")
    return RunFileResult(per_query=pq, name=parts.name, tag=pq.run_tag, source=parts.source,
                         streamed=note)


def _trec_eval_partitions(parts: Any, task: RunFileTask) -> Any:
    """trec_eval's ``-M``/``-J`` applied to each partition (both work topic by topic); the
    same refusal as in memory when they leave nothing."""
    from rankproof.measures import trec_eval_run

    kept_any = False
    for part in parts:
        kept = trec_eval_run(part, task.qrels, max_retrieved=task.max_retrieved,
                             judged_only=task.judged_only)
        if kept is not None:
            kept_any = True
            yield kept
    if not kept_any:
        from rankproof.cli._many import nothing_left

        raise nothing_left(parts.name, parts.source, task.max_retrieved, task.judged_only)


def _mib(n: int) -> str:
    if n >= 2**30:
        return f"{n / 2**30:,.3g} GiB"
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n / 2**10:,.0f} KiB"
