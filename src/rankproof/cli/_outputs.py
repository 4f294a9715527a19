"""Where a command may write: every destination checked before anything is read or written.

One rule for every command that writes a file the user names (``measure``,
``compare``, ``fuse``, ``eval``, ``gate``, ``baseline save``, ``adapt beir``),
applied by `guard_outputs` as the command's first act:

* an output that is one of the command's inputs — the same file, through a
  symbolic link or a hard link — is refused (exit 2), always, ``--force`` or
  not; so is an output inside an input folder where the command reads files
  of that kind, and the same output given twice;
* a directory, or a path under a regular file, is refused;
* an existing **read-only** file is refused unless ``--force``;
* an existing file of a **different kind** is refused unless ``--force``:
  the head of the file is sniffed, and a TREC run or qrels, a JSONL run or
  qrels, or a rankproof JSON document (its ``kind``) that is not what the
  command writes is kept (`sniff_kind`). Text that is none of these (a
  table, Markdown, XML) may be replaced;
* a FIFO or a device (``/dev/null``) is written through in place and a
  symbolic link through to its target (`rankproof._io.destination`).

``--force`` has that one meaning everywhere: replace an existing output that
would otherwise be refused as read-only, of another kind, or already there
(a saved baseline, a previous adaptation). It never lets an output replace
an input.
"""

from __future__ import annotations

import os
import re
import stat
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from rankproof._errors import InputError
from rankproof._io import GZIP_MAGIC, destination
from rankproof.cli._app import INPUTS

STDIN = "-"

_SNIFF_BYTES = 1 << 16
_JSON_LIMIT = 64 << 20
_DATA_LINES = 20
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|nan)$", re.I)

KINDS = {
    "run": "a run",
    "qrels": "qrels (judgments)",
    "rankproof.eval": "a rankproof eval report",
    "rankproof.comparison": "a rankproof comparison",
    "rankproof.gate": "a rankproof gate verdict",
    "rankproof.baseline": "a rankproof baseline",
    "rankproof.measure": "rankproof measure results",
    "rankproof.run": "a rankproof run result",
    "rankproof.evidence": "a rankproof evidence sidecar",
}
"""The kinds of file `sniff_kind` recognises, as a message names them."""


def force_option() -> Any:
    """The one ``--force`` (see the module docstring)."""
    return typer.Option(False, "--force",
                        help="Replace an existing output that would otherwise be refused "
                             "(read-only, of another kind, or already there). Never an input.")


def describe(kind: str | None) -> str:
    if kind is None:
        return "a text output"
    return KINDS.get(kind, f"a {kind} document")


def _head(path: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of the file's content, gunzipped when it is gzip."""
    with open(path, "rb") as fh:
        raw = fh.read(limit)
        if not raw.startswith(GZIP_MAGIC):
            return raw
        raw += fh.read(limit)  # compressed: read on, the output is capped below
    try:
        return zlib.decompressobj(wbits=31).decompress(raw, limit)
    except zlib.error:
        return b""


def _json_kind(doc: object) -> str | None:
    if not isinstance(doc, dict):
        return None
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.startswith("rankproof."):
        return kind
    tool = doc.get("tool")
    if isinstance(tool, dict) and tool.get("name") == "rankproof" and "runs" in doc:
        return "rankproof.measure"
    return None


def _row_kind(row: object) -> str | None:
    if not isinstance(row, dict):
        return None
    keys = set(row)
    if not keys & {"qid", "query_id"} or not keys & {"docid", "doc_id"}:
        return None
    if "score" in keys:
        return "run"
    if keys & {"rel", "relevance"}:
        return "qrels"
    return None


def _line_kind(fields: list[str]) -> str | None:
    if len(fields) == 6 and _INT.match(fields[3]) and _FLOAT.match(fields[4]):
        return "run"
    if len(fields) == 4 and _INT.match(fields[3]):
        return "qrels"
    return None


def _same(kinds: list[str | None]) -> str | None:
    return kinds[0] if kinds and all(k == kinds[0] for k in kinds) else None


def sniff_kind(path: Path) -> str | None:
    """What an existing regular file holds: ``run``, ``qrels``, ``rankproof.<kind>``, or None.

    Only the head is read (whole only for a JSON document up to 64 MiB). A
    file is called a run or qrels only when every one of its first data
    lines has that shape (TREC's six or four columns, BEIR's header, JSONL
    rows with ``qid``/``docid`` and ``score`` or ``rel``), so that a table,
    trec_eval's output or Markdown is never mistaken for data. An MS MARCO
    run (``qid docid rank``) looks like trec_eval's output and is not told
    apart: it is not recognised.
    """
    head = _head(path, _SNIFF_BYTES)
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    complete = len(head) < _SNIFF_BYTES
    lines = text.splitlines() if complete else text.splitlines()[:-1]
    data = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")][:_DATA_LINES]
    if not data:
        return None
    if data[0].lstrip().startswith(("{", "[")):
        from rankproof.data import parse_document

        if not complete and os.path.getsize(path) <= _JSON_LIMIT:
            text = _head(path, _JSON_LIMIT).decode("utf-8", errors="replace").lstrip("\ufeff")
        try:
            doc = parse_document(text, str(path), what="file")
            return _json_kind(doc) or _row_kind(doc)  # a one-line JSONL file parses whole
        except ValueError:
            pass
        rows = []
        for line in data:
            try:
                rows.append(_row_kind(parse_document(line, str(path), what="line")))
            except ValueError:
                return None
        return _same(rows)
    first = [f.strip() for f in data[0].split("\t")]
    if first[:3] == ["query-id", "corpus-id", "score"]:
        scores = [ln.split("\t")[2].strip() for ln in data[1:] if ln.count("\t") >= 2]
        return "qrels" if all(_INT.match(s) for s in scores) else "run"
    return _same([_line_kind(ln.split()) for ln in data])


def _read_only(st: os.stat_result, path: Path) -> bool:
    """No write permission bit at all, or (not as root) no write access for us."""
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return True
    return os.geteuid() != 0 and not os.access(path, os.W_OK)


def _parent_problem(path: Path) -> str | None:
    """Why the folders above ``path`` cannot hold it (a regular file on the way), or None."""
    for parent in path.absolute().parents:
        if parent.exists():
            return None if parent.is_dir() else "a parent is not a directory"
    return None


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def guard_outputs(
    outputs: Sequence[tuple[Path | str | None, str | None]],
    inputs: Sequence[Path | str | None] = (),
    *,
    force: bool = False,
    input_dirs: Sequence[tuple[Path | None, frozenset[str] | None]] = (),
) -> None:
    """Refuse, before anything is read or written, every destination the rules forbid.

    ``outputs`` pairs each destination (None: not asked for; ``-``: standard
    output) with the kind the command writes there (None for text such as a
    table or Markdown). ``inputs`` are the files the command will read (they
    are remembered for `rankproof.cli._runs.check_outputs` too);
    ``input_dirs`` are folders it reads, each with the suffixes it reads
    there (None: every file).
    """
    for given in inputs:
        if given is not None and str(given) != STDIN:
            INPUTS.append(Path(given))
    seen: dict[str, str] = {}
    for out, kind in outputs:
        if out is None or str(out) == STDIN:
            continue
        dest = destination(out)
        for given in INPUTS:
            if dest.path.exists() and given.exists() and dest.path.samefile(given):
                raise InputError(f"this output would replace the input {str(given)!r}; "
                                 "write it elsewhere", path=str(out))
        for folder, suffixes in input_dirs:
            if folder is not None and _inside(dest.path, folder) and (
                    suffixes is None or dest.path.suffix.lower() in suffixes):
                raise InputError(f"this output is inside the input folder {str(folder)!r}, "
                                 "where it would be read as input; write it elsewhere",
                                 path=str(out))
        if not dest.replaced:  # a device or a pipe: written in place, as often as asked
            continue
        key = str(dest.path.resolve())
        if key in seen:
            raise InputError(f"this output is given twice ({seen[key]!r} and {str(out)!r})",
                             path=str(out))
        seen[key] = str(out)
        problem = _parent_problem(dest.path)
        if problem is not None:
            raise InputError(f"cannot write here: {problem}", path=str(out))
        _check_existing(dest.path, str(out), kind, force)


def _check_existing(path: Path, given: str, kind: str | None, force: bool) -> None:
    try:
        st = os.stat(path)
    except OSError:
        return
    if force:
        return
    if _read_only(st, path):
        raise InputError("the file exists and is read-only; pass --force to replace it",
                         path=given)
    try:
        found = sniff_kind(path)
    except OSError:
        return
    if found is not None and found != kind:
        raise InputError(f"the file holds {describe(found)}, and this command would replace "
                         f"it with {describe(kind)}; pass --force to replace it", path=given)
