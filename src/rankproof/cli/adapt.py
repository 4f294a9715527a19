"""``rankproof adapt beir``: turn a BEIR folder into a corpus + quote-anchored judgments."""

from __future__ import annotations

from pathlib import Path

import typer

from rankproof.cli._app import app, err_console, error_boundary
from rankproof.corpus import adapt_beir
from rankproof.report.console import plain

adapt_app = typer.Typer(help="Convert other formats into rankproof's corpus + judgments.",
                        no_args_is_help=True)
app.add_typer(adapt_app, name="adapt")


@adapt_app.command("beir")
@error_boundary
def adapt_beir_command(
    src: Path = typer.Argument(..., metavar="BEIR_DIR",
                               help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)."),
    out: Path = typer.Argument(..., metavar="OUT",
                               help="Output folder (must not exist, or be empty)."),
    split: str = typer.Option("test", "--split", help="Which qrels/<split>.tsv to use."),
) -> None:
    """Validate everything, then write OUT/docs/*.txt and OUT/judgments.jsonl."""
    result = adapt_beir(src, out, split=split)
    err_console.print(plain(f"wrote {result.documents} documents and the judgments of "
                            f"{split} to {result.out}"))
