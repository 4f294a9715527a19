"""Read any JSON document rankproof writes, and say plainly what it is or why it is refused.

``rankproof report`` and ``rankproof inspect`` take whatever a user hands them:
an eval report, a comparison, a gate verdict, a discovery or RAG report,
``measure`` output. The kind is read from the document's ``kind`` field (the
``measure`` output, written before kinds existed, is known by its ``tool``
block) and its ``schema_version`` is checked against the newest this
rankproof reads: a newer file is refused with the versions named (reading it
as if it were older would silently drop or misread what changed), and so is
a file of a kind nothing here renders.

The document keeps the SHA-256 of the bytes read, so that every output can
name exactly which input it was made from (the LaTeX sidecar, the HTML
provenance section).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankproof._errors import InputError
from rankproof._io import read_bytes

__all__ = ["KINDS", "Document", "parse", "read"]

KINDS: dict[str, tuple[str, int, int]] = {
    "rankproof.eval": ("eval report", 1, 2),
    "rankproof.comparison": ("comparison", 1, 3),
    "rankproof.gate": ("gate verdict", 2, 2),
    "rankproof.discovery": ("discovery report", 1, 1),
    "rankproof.rag": ("RAG report", 1, 1),
    "rankproof.measure": ("measure results", 1, 1),
    "rankproof.run": ("run result", 1, 1),
    "rankproof.baseline": ("baseline", 1, 2),
}
"""kind -> (what it is called, oldest and newest schema_version this rankproof renders)."""

_MAX_BYTES = 512 << 20


@dataclass(frozen=True)
class Document:
    """A parsed rankproof JSON document: its kind, version, content and digest."""

    kind: str
    schema_version: int
    data: dict[str, Any]
    path: Path
    digest: str
    """``sha256:<hex>`` of the file's bytes as read."""

    @property
    def what(self) -> str:
        """What the document is called in messages (``eval report``)."""
        return KINDS[self.kind][0]


def _kind(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    kind = data.get("kind")
    if isinstance(kind, str):
        return kind
    tool = data.get("tool")
    if isinstance(tool, dict) and tool.get("name") == "rankproof" and "runs" in data:
        return "rankproof.measure"
    return None


def _loads(raw: bytes, label: str) -> Any:
    """Parse with the shared depth and integer bounds (`rankproof.data.read_document`)."""
    from rankproof.data import Input, read_document

    return read_document(Input.from_bytes(raw, label), what="report input")


def read(path: str | Path) -> Document:
    """Read ``path`` as a rankproof document; `InputError` (exit 2) naming the file when it is
    not one this rankproof renders (unknown kind, newer or older schema, not JSON)."""
    p = Path(path)
    return parse(read_bytes(p, "the report input"), p)


def parse(raw: bytes, path: Path) -> Document:
    """``raw`` (a file's bytes, or a document rendered in memory, named ``path``) as a
    rankproof document, with `read`'s checks and its digest of exactly these bytes."""
    where = str(path)
    if len(raw) > _MAX_BYTES:
        raise InputError(f"the file is {len(raw):,} bytes; a report input may be at most "
                         f"{_MAX_BYTES:,}", path=where)
    data = _loads(raw, where)
    kind = _kind(data)
    if kind is None:
        raise InputError("not a rankproof JSON document (no 'kind' field); report renders "
                         + ", ".join(v[0] for v in KINDS.values()), path=where, field="kind")
    if kind not in KINDS:
        shown_kind = kind if len(kind) <= 80 and kind.isprintable() else repr(kind[:80])
        raise InputError(f"unknown kind {shown_kind!r}; report renders "
                         + ", ".join(f"{k} ({v[0]})" for k, v in KINDS.items()),
                         path=where, field="kind")
    what, oldest, newest = KINDS[kind]
    version = data.get("schema_version")
    if type(version) is not int:
        raise InputError(f"the {what} has no integer schema_version (got {version!r:.40})",
                         path=where, field="schema_version")
    if version > newest:
        raise InputError(f"the {what} has schema_version {version}, newer than this rankproof "
                         f"reads (up to {newest}); upgrade rankproof to render it",
                         path=where, field="schema_version")
    if version < oldest:
        raise InputError(f"the {what} has schema_version {version}, older than this rankproof "
                         f"renders (from {oldest})", path=where, field="schema_version")
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    return Document(kind=kind, schema_version=version, data=data, path=path, digest=digest)
