"""``rankproof adapt beir``: turn a BEIR folder into a corpus + quote-anchored judgments."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rankproof._errors import InputError
from rankproof._io import write_reason
from rankproof.cli._app import app, err_console, error_boundary
from rankproof.cli._outputs import force_option
from rankproof.cli._runs import choices
from rankproof.corpus import adapt_beir
from rankproof.report.console import plain

if TYPE_CHECKING:
    QueryIdChoice = str
else:
    QueryIdChoice = choices("QueryIdChoice", ("rename", "refuse"))

adapt_app = typer.Typer(help="Convert other formats into rankproof's corpus + judgments.",
                        no_args_is_help=True)
app.add_typer(adapt_app, name="adapt")


def _refuse_own_input(src: Path, out: Path) -> None:
    """OUT may not be BEIR_DIR, nor a folder holding it (``--force`` would replace it)."""
    if not out.exists() or not src.exists():
        return
    if out.samefile(src) or src.resolve().is_relative_to(out.resolve()):
        raise InputError(f"this output would replace the input {str(src)!r}; write it "
                         "elsewhere", path=str(out))


@adapt_app.command("beir")
@error_boundary
def adapt_beir_command(
    src: Path = typer.Argument(..., metavar="BEIR_DIR",
                               help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)."),
    out: Path = typer.Argument(..., metavar="OUT",
                               help="Output folder (must not exist, or be empty)."),
    split: str = typer.Option("test", "--split", help="Which qrels/<split>.tsv to use."),
    query_ids: QueryIdChoice = typer.Option(
        "rename", "--query-ids",
        help="rename: map a query id that is not kebab-case (original kept in source_id); "
             "refuse: refuse such ids."),
    force: bool = force_option(),
) -> None:
    """Validate everything, then write OUT/docs/*.txt and OUT/judgments.jsonl.

    Graded qrels keep their grades; `rankproof eval OUT` scores the folder
    (by document, as BEIR does).
    """
    _refuse_own_input(src, out)
    try:
        result = adapt_beir(src, out, split=split, overwrite=force,
                            query_ids=str(query_ids))  # type: ignore[arg-type]
    except OSError as exc:  # the adapter removed what it wrote; say where, in one line
        raise InputError(f"cannot write here: {write_reason(exc)}", path=str(out)) from None
    graded = ", graded" if result.graded else ""
    err_console.print(plain(f"wrote {result.documents} documents and the judgments of "
                            f"{result.queries} queries ({split}{graded}) to {result.out}; "
                            f"score them with `rankproof eval {result.out}`"))
