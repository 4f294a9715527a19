"""``rankproof providers check PROVIDER.yaml``: is this server usable, and what does it serve?

One call of each kind the file allows (``GET /models``, a structured chat
completion, one embedding), bypassing the cache: the models listed, whether
structured output came back valid, the embedding dimension, each call's
latency, and why a call failed. Exit 0 when every allowed kind worked, 2 when
one did not (a server without ``/models`` is reported, not failed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rankproof.cli._app import EXIT_INPUT, app, err_console, error_boundary
from rankproof.cli._runs import choices, write_output
from rankproof.report.console import make_console, plain, print_table

if TYPE_CHECKING:
    from rankproof.providers import CallCheck

    CheckFormat = str
else:
    CheckFormat = choices("CheckFormat", ("table", "json"))

providers_app = typer.Typer(
    name="providers", no_args_is_help=True,
    help="Model providers (OpenAI-compatible servers): check one before using it.")
app.add_typer(providers_app, name="providers")


def _found(call: CallCheck) -> str:
    d: dict[str, Any] = call.detail
    if not call.ok:
        return str(call.error)
    if call.kind == "models":
        listed = "listed" if d["listed"] else "NOT listed"
        return f"{len(d['models'])} model(s): {', '.join(d['models'])} (the model is {listed})"
    if call.kind == "chat":
        u = d["usage"]
        tokens = (f"{u.get('prompt_tokens', '?')} in / {u.get('completion_tokens', '?')} out "
                  "tokens") if u else "no usage reported"
        return f"structured output ({d['structured_output']}) valid; {tokens}"
    return f"dimension {d['dimension']}"


@providers_app.command("check")
@error_boundary
def check_command(
    provider_file: Path = typer.Argument(..., metavar="PROVIDER.yaml",
                                         help="A provider file (docs/providers.md)."),
    fmt: CheckFormat = typer.Option("table", "--format", "-f",
                                    help="A table, or the check as JSON."),
    output: str | None = typer.Option(None, "--output", "-o", metavar="PATH",
                                      help="Write the JSON check here (- for standard "
                                           "output)."),
) -> None:
    """Call the provider once per kind and print what it supports (exit 2 if a call failed)."""
    from rankproof._manifest import provenance
    from rankproof.providers import check_provider, load_provider_config

    config = load_provider_config(provider_file)
    result = check_provider(config)
    doc = json.dumps({**result.to_dict(), "provenance": provenance(
        inputs={"provider": provider_file}, output=output)}, indent=2) + "\n"
    if output is not None:
        write_output(output, doc)
    if str(fmt) == "json":
        if output != "-":
            typer.echo(doc, nl=False)
    else:
        from rich.table import Table

        table = Table(title=f"provider {config.name} at {config.base_url} (model "
                            f"{config.model})")
        for col in ("call", "ok", "latency ms", "found"):
            table.add_column(col)
        for call in result.calls:
            table.add_row(plain(call.kind), plain("yes" if call.ok else "no",
                                                  style="" if call.ok else "bold red"),
                          plain(f"{call.latency_ms:.1f}"), plain(_found(call)))
        print_table(make_console(), table)
    if not result.ok:
        failed = [c for c in result.calls if not c.ok and c.kind != "models"]
        err_console.print(plain(
            f"the provider at {config.base_url} failed {len(failed)} check call(s): "
            + "; ".join(f"{c.kind}: {c.reason}" for c in failed)))
        raise typer.Exit(EXIT_INPUT)

