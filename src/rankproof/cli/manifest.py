"""``rankproof manifest verify OUTPUT.json``: have the inputs of a result changed since?

Every JSON output carries a provenance block (`rankproof._manifest.provenance`) recording
its input files (and upstream run files) with their sha256 digests and sizes. ``verify``
re-hashes those that still exist and says, file by file, whether they are unchanged.
Relative paths are looked up under the working directory the block records, then under
the current one. A document whose evidence sits in a sidecar (``NAME.evidence.json``) has
the sidecar's digest checked too; a fused run's provenance sidecar has the run itself
checked (role ``output``).

Exit codes: 0 nothing changed (missing inputs are reported, not a failure: a result may
outlive its scratch files), 1 at least one input changed, 2 the file is not a rankproof
JSON document or carries no provenance block.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from rankproof._errors import InputError
from rankproof.cli._app import EXIT_FAILED, app, error_boundary
from rankproof.cli._runs import choices
from rankproof.report.console import make_console, plain, print_table

manifest_app = typer.Typer(
    name="manifest", no_args_is_help=True,
    help="Check a result's provenance: re-hash the inputs it records and say which changed.")
app.add_typer(manifest_app, name="manifest")

FORMATS = ("table", "json")
KIND = "rankproof.manifest-check"
"""The kind of ``verify -f json``'s document."""

if TYPE_CHECKING:
    VerifyFormat = str
else:
    VerifyFormat = choices("VerifyFormat", FORMATS)


def _is_rankproof(doc: Mapping[str, Any]) -> bool:
    kind = doc.get("kind")
    if isinstance(kind, str):
        return kind.startswith("rankproof.")
    tool = doc.get("tool")  # measure JSON, written before kinds existed
    return isinstance(tool, Mapping) and tool.get("name") == "rankproof"


def _block(doc: Any, label: str) -> Mapping[str, Any]:
    if not isinstance(doc, Mapping) or not _is_rankproof(doc):
        raise InputError("not a rankproof JSON document (no 'kind' naming one)", path=label,
                         field="kind")
    block = doc.get("provenance")
    if not isinstance(block, Mapping):
        raise InputError("the document carries no provenance block", path=label,
                         field="provenance")
    if "manifest_version" not in block:
        raise InputError("the provenance block records no input files (written by a rankproof "
                         "before the manifest); nothing to verify", path=label,
                         field="provenance.manifest_version")
    return block


def _extra(doc: Mapping[str, Any], path: Path) -> list[dict[str, Any]]:
    """The evidence sidecar a document references, and a provenance sidecar's output."""
    from rankproof._manifest import verify_entry
    from rankproof.comparison import EvidenceSidecar

    out: list[dict[str, Any]] = []
    evidence = doc.get("evidence")
    if isinstance(evidence, Mapping) and "sidecar" in evidence:
        ref = EvidenceSidecar.from_dict(evidence, path=path)
        out.append(verify_entry("evidence sidecar", {
            "path": str(path.parent / ref.sidecar), "sha256": ref.sha256}))
    if doc.get("kind") == "rankproof.provenance" and isinstance(doc.get("output"), Mapping):
        block = doc.get("provenance")
        cwd = block.get("cwd") if isinstance(block, Mapping) else None
        out.append(verify_entry("output", doc["output"], cwd if isinstance(cwd, str) else None))
    return out


def _short(digest: str | None) -> str:
    return "—" if not digest else digest.removeprefix("sha256:")[:12]


@manifest_app.command("verify")
@error_boundary
def verify_command(
    output: Path = typer.Argument(..., metavar="OUTPUT.json",
                                  help="Any rankproof JSON output (measure, compare, eval, "
                                       "gate, discover, rag, a fuse provenance sidecar)."),
    fmt: VerifyFormat = typer.Option("table", "--format", "-f",
                                     help="A table, or the check as JSON."),
) -> None:
    """Re-hash the inputs OUTPUT.json records: exit 0 none changed (missing ones are
    reported, not a failure), 1 an input changed, 2 not a rankproof JSON with provenance."""
    from rankproof._manifest import CHANGED, MISSING, verify
    from rankproof.data import read_document

    doc = read_document(output, what="rankproof JSON document")
    block = _block(doc, str(output))
    try:
        entries = [*verify(block), *_extra(doc, output)]
    except ValueError as exc:
        raise InputError(str(exc), path=str(output), field="provenance") from None
    changed = [e for e in entries if e["status"] == CHANGED]
    missing = [e for e in entries if e["status"] == MISSING]
    if str(fmt) == "json":
        typer.echo(json.dumps({"kind": KIND, "schema_version": 1, "document": str(output),
                               "changed": len(changed), "missing": len(missing),
                               "entries": entries}, indent=2))
    else:
        from rich.table import Table

        table = Table(title=f"inputs of {output}")
        for col in ("role", "path", "recorded sha256", "status"):
            table.add_column(col)
        for e in entries:
            style = "bold red" if e["status"] == CHANGED else (
                "yellow" if e["status"] == MISSING else "")
            table.add_row(plain(e["role"]), plain(e["path"]), plain(_short(e["recorded"])),
                          plain(e["status"], style=style))
        console = make_console()
        print_table(console, table)
        if not entries:
            console.print(plain("the provenance block records no input files"))
        console.print(plain(f"{len(entries)} recorded, {len(changed)} changed, "
                            f"{len(missing)} missing"))
    if changed:
        raise typer.Exit(EXIT_FAILED)
