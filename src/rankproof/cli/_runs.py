"""What every command that reads runs shares: its options, its reader, its run names.

One flag means one thing everywhere, so the options are made here, once:
``--order``, ``--topics``, ``-l/--rel-level``, ``--allow-extra-columns``,
``--dedupe`` and ``--name``. Their choices come from the library's own types
(`rankproof.data.Order`, `rankproof.data.Dedupe`,
`rankproof.measures.TopicPolicy`), so a new choice in the library is a new
choice here without an edit.

Runs and qrels are read through `rankproof.data.load_run` / `load_qrels`
(TREC, BEIR TSV, JSON, JSONL, MS MARCO; ``-`` for standard input, which can
be read only once). A run is named by the one rule of `rankproof.jobs` (``--name``, else
its unique run tag, else its path made unique).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, get_args

import typer

from rankproof._errors import InputError
from rankproof._io import atomic_write
from rankproof.cli._app import INPUTS
from rankproof.cli._derived import field_option
from rankproof.cli._outputs import STDIN as STDIN
from rankproof.cli._outputs import guard_outputs
from rankproof.data import (
    Dedupe,
    Order,
    Qrels,
    ReadOptions,
    Run,
    load_qrels,
    load_run,
    write_beir_run,
    write_json_run,
    write_jsonl_run,
    write_msmarco_run,
    write_parquet_run,
    write_trec_run,
)
from rankproof.jobs import check_names, check_stdin, unique_labels
from rankproof.measures import EvalOptions, TopicPolicy


def choices(name: str, values: tuple[Any, ...]) -> type[StrEnum]:
    """A Typer choice type whose members are the library's own values."""
    return cast(type[StrEnum], cast(Any, StrEnum)(name, [(str(v), str(v)) for v in values]))


if TYPE_CHECKING:
    OrderChoice = str
    TopicsChoice = str
    DedupeChoice = str
else:
    OrderChoice = choices("OrderChoice", get_args(Order))
    TopicsChoice = choices("TopicsChoice", get_args(TopicPolicy))
    DedupeChoice = choices("DedupeChoice", get_args(Dedupe))


RUN_WRITERS: dict[str, Callable[[Run, Path, str | None], None]] = {
    "trec": lambda run, path, tag: write_trec_run(run, path, tag=tag),
    "beir": lambda run, path, tag: write_beir_run(run, path),
    "json": lambda run, path, tag: write_json_run(run, path),
    "jsonl": lambda run, path, tag: write_jsonl_run(run, path),
    "msmarco": lambda run, path, tag: write_msmarco_run(run, path),
    "parquet": lambda run, path, tag: write_parquet_run(run, path, tag=tag),
}
"""The library's run writer for each format a command writes runs in (``fuse``, ``export``);
the tag is TREC's sixth column and Parquet's schema metadata, where the others have none."""


def order_option() -> Any:
    """``--order`` (`rankproof.measures.EvalOptions.order`)."""
    return field_option(EvalOptions, "order")


def dedupe_option() -> Any:
    """``--dedupe`` (`rankproof.data.ReadOptions.dedupe`)."""
    return field_option(ReadOptions, "dedupe")


FORMATS_ASKED: dict[str, str | None] = {"run": None, "qrels": None}
"""``--run-format`` / ``--qrels-format`` of the command running now (None: by content).
Set by the options' callbacks on every invocation, read by `load_runs`, `load_qrels_arg`
and the run-file tasks (which carry it to the engine's workers)."""


def _remember_format(kind: str, allowed: tuple[str, ...]) -> Callable[[Any], Any]:
    def callback(value: Any) -> Any:
        if value is not None and str(value) not in allowed:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(allowed)}")
        FORMATS_ASKED[kind] = None if value is None else str(value)
        return value

    return callback


def run_format_option() -> Any:
    """``--run-format FORMAT``: read every run as FORMAT instead of by its content."""
    from rankproof.data import RUN_FORMATS

    return typer.Option(None, "--run-format", metavar="FORMAT",
                        callback=_remember_format("run", tuple(RUN_FORMATS)),
                        help="Read every run as this format (" + ", ".join(RUN_FORMATS) +
                             ") instead of recognising it by its content.")


def qrels_format_option() -> Any:
    """``--qrels-format FORMAT``: read the qrels as FORMAT instead of by their content."""
    from rankproof.data import QRELS_FORMATS

    return typer.Option(None, "--qrels-format", metavar="FORMAT",
                        callback=_remember_format("qrels", tuple(QRELS_FORMATS)),
                        help="Read the qrels as this format (" + ", ".join(QRELS_FORMATS) +
                             ") instead of recognising them by their content.")


def allow_extra_columns_option() -> Any:
    return typer.Option(False, "--allow-extra-columns",
                        help="Accept run lines with more columns than the format has "
                             "(trec_eval ignores the extra).")


def names_option() -> Any:
    return typer.Option(None, "--name", metavar="NAME",
                        help="Name of each run in the output, once per run in run order "
                             "(default: its run tag when unique, else its path made unique).")


def runs_argument(help: str = "One or more runs (TREC, BEIR TSV, JSON, JSONL, MS MARCO; .gz "
                               "ok; - for standard input).") -> Any:
    return typer.Argument(..., metavar="RUN...", help=help)


def qrels_argument() -> Any:
    return typer.Argument(..., metavar="QRELS",
                          help="Judgments (TREC qrels, BEIR TSV, JSON, JSONL; - for standard "
                               "input).")


def subtopics_option() -> Any:
    """The one ``--subtopics`` (measure, compare): QRELS is ndeval's subtopic qrels."""
    return typer.Option(
        False, "--subtopics",
        help="QRELS holds subtopic judgments (qid subtopic docid rel, as ndeval reads): needed "
             "by the diversity measures alpha_nDCG, ERR_IA, NRBP, P_IA and StRecall.")


def check_diversity(measures: Any, subtopics: bool) -> None:
    """Refuse (exit 2) diversity measures over plain qrels, before anything is read."""
    from rankproof.measures import DIVERSITY_FAMILIES, resolve_measures

    names = [str(m) for m in resolve_measures(list(measures))
             if m.family in DIVERSITY_FAMILIES] if measures and not subtopics else []
    if names:
        raise InputError(f"{', '.join(sorted(set(names)))}: diversity measures need subtopic "
                         "qrels (qid subtopic docid rel); pass --subtopics", field="--subtopics")


def output_option(help: str) -> Any:
    return typer.Option(None, "-o", "--output", metavar="PATH", help=help + " - is standard "
                                                                             "output.")


def note_input(path: Path | str) -> None:
    """Remember an input file, so that `check_outputs` can refuse to write over it."""
    if str(path) != STDIN:
        INPUTS.append(Path(path))


def note_inputs(qrels: Path | str, runs: Sequence[Path | str]) -> None:
    """`note_input` for the qrels and every run of a request."""
    for path in (qrels, *runs):
        note_input(path)


def read_options(dedupe: object, allow_extra_columns: bool, memory_cap: int | None
                 ) -> ReadOptions:
    """The `ReadOptions` of ``--run-format``, ``--dedupe``, ``--allow-extra-columns`` and
    ``--memory-cap``."""
    return ReadOptions(format=FORMATS_ASKED["run"],  # type: ignore[arg-type]
                       dedupe=None if dedupe is None else str(dedupe),  # type: ignore[arg-type]
                       extra_columns="ignore" if allow_extra_columns else "error",
                       memory_cap=memory_cap)


def check_outputs(*paths: Path | str | None) -> None:
    """Refuse an output that is one of the inputs noted so far, or is given twice.

    The last line of defence before a write; commands check every destination
    fully (read-only, kind, ``--force``) with `guard_outputs` before they read
    anything.
    """
    guard_outputs([(p, None) for p in paths], force=True)


def write_output(path: Path | str, text: str) -> None:
    """Write ``text`` to ``path`` atomically, or to standard output when ``path`` is ``-``."""
    check_outputs(path)
    if str(path) == STDIN:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with atomic_write(path) as fh:
        fh.write(text)


def _value(choice: StrEnum | str | None) -> Any:
    return None if choice is None else str(choice)


def load_qrels_arg(path: Path | str, dedupe: DedupeChoice | None = None) -> Qrels:
    note_input(path)
    return load_qrels(str(path), dedupe=_value(dedupe),
                      format=FORMATS_ASKED["qrels"])  # type: ignore[arg-type]


def load_runs(qrels: Path | str | None, paths: list[Path], *, names: list[str] | None = None,
              dedupe: DedupeChoice | None = None, allow_extra_columns: bool = False,
              subtopics: bool = False) -> tuple[Qrels | None, list[Run]]:
    """Read the qrels (if given) and the runs, named by the rules in the module docstring.

    With ``subtopics`` the qrels are ndeval's subtopic qrels (a document is judged once per
    subtopic, so not the one-label-per-pair reader)."""
    given = [str(p) for p in paths]
    check_stdin([*([str(qrels)] if qrels is not None else []), *given])
    check_names(names, given)
    q: Qrels | None = None
    if qrels is not None and subtopics:
        from rankproof.data import read_subtopic_qrels

        note_input(qrels)
        q = read_subtopic_qrels(str(qrels))
    elif qrels is not None:
        q = load_qrels_arg(qrels, dedupe)
    for p in given:
        note_input(p)
    runs = [load_run(p, dedupe=_value(dedupe), format=FORMATS_ASKED["run"],  # type: ignore[arg-type]
                     extra_columns="ignore" if allow_extra_columns else "error")
            for p in given]
    labels = unique_labels(given, names, runs)
    return q, [r if r.name == n else dataclasses.replace(r, name=n)
               for r, n in zip(runs, labels, strict=True)]
