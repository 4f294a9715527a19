"""What every command shares of the results history: the ``--history [URL]`` option,
recording the JSON a command wrote, and ``history:ID`` references for a gate's baseline."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

HISTORY_PREFIX = "history:"
DEFAULT_STORE = "default"


def history_option(help: str = "Also record the JSON this command writes in the results "
                               "history: a SQLite file, postgresql://…, or 'default' "
                               "($RANKPROOF_HISTORY, else .rankproof/history.db).") -> Any:
    """``--history URL`` (``default``: the default store)."""
    return typer.Option(None, "--history", metavar="URL", help=help)


def store_option() -> Any:
    """The store a ``history`` subcommand reads or writes."""
    return typer.Option(None, "--history", metavar="URL",
                        help="The store: a SQLite file or postgresql://… (default "
                             "$RANKPROOF_HISTORY, else .rankproof/history.db).")


def store_url(url: str | None) -> str | None:
    return None if url in (None, DEFAULT_STORE) else url


def branch_default() -> str | None:
    """The branch a CI job is on (GitHub, GitLab), ``$RANKPROOF_BRANCH`` first, else the
    checkout's branch; None outside a checkout."""
    for name in ("RANKPROOF_BRANCH", "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_BRANCH",
                 "CI_COMMIT_REF_NAME"):
        if os.environ.get(name):
            return os.environ[name]
    import subprocess

    try:
        out = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out if out and out != "HEAD" else None


def record(url: str | None, paths: Sequence[Path | str | None], *,
           branch: str | None = None, only_results: bool = False) -> None:
    """Add the JSON files a command wrote to the history (``url`` None: not asked for).

    ``only_results``: files that are not a result the store keeps (another kind, not
    JSON) are passed over instead of refused — for a folder of outputs, such as the stages
    of an experiment run."""
    if url is None:
        return
    from rankproof._errors import InputError
    from rankproof.cli._app import print_note
    from rankproof.history import kind_of, open_store, read_json_file

    written = [p for p in paths if p is not None and str(p) != "-"]
    if not written and not only_results:
        print_note("--history records the JSON a command writes to a file; give -o PATH",
                   about="history")
        return
    docs = []
    for p in written:
        try:
            doc = read_json_file(p)
            kind_of(doc, str(p))
        except InputError as exc:
            if not only_results:
                raise
            print_note(f"not recorded: {exc}", about="history")
            continue
        docs.append((str(p), doc))
    if not docs:
        return
    with open_store(store_url(url)) as store:
        for label, doc in docs:
            rid, new = store.add(doc, label, branch=branch or branch_default())
            print_note(f"{'recorded' if new else 'already recorded'} {rid[:19]} in "
                       f"{store.where}", about="history")


#: Where each file `materialize` wrote came from: {path: {"ref", "history", "result_id"}}.
_SOURCES: dict[str, dict[str, str]] = {}


def history_source(path: str | os.PathLike[str] | None) -> dict[str, str] | None:
    """For a file `materialize` wrote: the reference it was asked for, the store (its URL
    without a password) and the stored result's id — what provenance records instead of
    the temporary path; None for any other file."""
    return None if path is None else _SOURCES.get(os.fspath(path))


def is_history_ref(ref: Any) -> bool:
    return ref is not None and os.fspath(ref).startswith(HISTORY_PREFIX)


def materialize(ref: str | os.PathLike[str], url: str | None = None) -> str:
    """``history:ID`` or ``history:latest@BRANCH`` → the path of a temporary JSON file holding
    the stored document (from ``url``, default the default store), removed when the command
    ends. Any other reference is returned as it is."""
    import json

    import click

    from rankproof.history import open_store

    text = os.fspath(ref)
    if not text.startswith(HISTORY_PREFIX):
        return text
    with open_store(store_url(url)) as store:
        info = store.get(text[len(HISTORY_PREFIX):])
        doc = store.document(info)
    folder = Path(tempfile.mkdtemp(prefix="rankproof-history-"))
    path = folder / f"{info.id[7:19]}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _SOURCES[str(path)] = {"ref": text, "history": store.where, "result_id": info.id}

    def cleanup() -> None:
        _SOURCES.pop(str(path), None)
        path.unlink(missing_ok=True)
        folder.rmdir()

    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(cleanup)
    return str(path)
