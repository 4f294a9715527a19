"""Baselines: a run's per-case rows saved under a name, to compare later runs against.

A baseline keeps every case's values (not just means), because a
``vs_baseline`` check pairs the new run with it case by case and tests the
differences; and it keeps the provenance that decides whether the two runs
measured the same thing. A comparison is refused when the baseline was made
with different retrieval measures, a different granularity (chunk or
document) or different judgments (digest): the difference would then measure
the change of yardstick, not of the system. A different corpus digest is not
refused — changing chunking or documents is a change of the system under
test — but it is stamped into the verdict.

Files are JSON (``schema_version`` 2; version-1 files, which hold the same
fields, still load), written atomically, one per name, in a directory
(``.rankproof/baselines`` by default). A name becomes a file name, so it
must be a single safe path component; the resolved path is checked to stay
inside the directory.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from rankproof._errors import ConfigError, InputError
from rankproof._io import atomic_write, write_new
from rankproof._limits import shown
from rankproof._version import __version__
from rankproof.data import read_document, validate_model
from rankproof.targets import RunProvenance, RunResult

SCHEMA_VERSION: Literal[2] = 2
DEFAULT_DIR = Path(".rankproof") / "baselines"
SUFFIX = ".json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class _BaselineFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1, 2]  # version 1 files (identical but for the number) still load
    kind: Literal["rankproof.baseline"]
    name: str
    created_at: str
    tool_version: str
    source: dict[str, Any]
    run: dict[str, Any]


class _Strict(BaseModel):
    """Strict types for reading: a string where a list belongs is refused by name,
    never iterated character by character or passed on to crash later.

    Unknown keys inside the run are left to `RunResult.from_dict` (``extra="allow"``),
    so a field added by a later version is not refused here for being new.
    """

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


class _ProvenanceDoc(_Strict):
    kind: Literal["target", "report"]
    measures: list[str] | None = None
    granularity: str | None = None
    judgments_digest: str | None = None
    corpus_digest: str | None = None
    config_digest: str | None = None
    target: str | None = None
    stage: str | None = None
    tool_version: str | None = None
    created_at: str | None = None


class _RowDoc(_Strict):
    case_id: str
    values: dict[str, float]
    latency_ms: float | None = None
    tags: list[str] | None = None
    ranked_ids: list[str] | None = None
    text: str | None = None


class _LatencyDoc(_Strict):
    """The cases' latency summary a run result stores (`RunResult.latency_summary`)."""

    n: float
    p50: float
    p95: float
    p99: float
    mean: float
    max: float


class _RunDoc(_Strict):
    schema_version: int
    kind: Literal["rankproof.run"]
    name: str
    metrics: list[str]
    aggregates: dict[str, float]
    provenance: _ProvenanceDoc
    notes: list[str] | None = None
    rows: list[_RowDoc]
    latency: _LatencyDoc | None = None


class _BaselineDoc(BaseModel):
    """A baseline file as read: `_BaselineFile` with every field's type checked strictly,
    down to the run's rows (the checks `RunResult.from_dict` does not make)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    schema_version: Literal[1, 2]
    kind: Literal["rankproof.baseline"]
    name: str
    created_at: str
    tool_version: str
    source: dict[str, Any]
    run: _RunDoc


@dataclass(frozen=True)
class Baseline:
    """A saved run: its name, where it is stored, what it was made from, and its rows."""

    name: str
    result: RunResult
    created_at: str
    source: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", MappingProxyType(dict(self.source)))

    __hash__ = None  # type: ignore[assignment]


def check_name(name: object) -> str:
    """A baseline name: one safe path component (letters, digits, '.', '_', '-'; ≤ 100)."""
    if not isinstance(name, str) or not _NAME.match(name) or name.endswith("."):
        raise ConfigError(
            f"baseline name {shown(name)} is not allowed: use 1-100 letters, digits, '.', '_' or "
            "'-', starting with a letter or digit (it becomes a file name)")
    return name


def baseline_path(name: str, directory: str | os.PathLike[str] = DEFAULT_DIR) -> Path:
    """Where baseline ``name`` lives in ``directory``; refuses names that would escape it."""
    check_name(name)
    root = Path(directory).resolve()
    path = (root / f"{name}{SUFFIX}").resolve()
    if path.parent != root:
        raise ConfigError(f"baseline name {name!r} resolves outside {root}")
    return path


def save_baseline(
    result: RunResult,
    name: str,
    directory: str | os.PathLike[str] = DEFAULT_DIR,
    *,
    source: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> Path:
    """Write ``result`` as baseline ``name`` (atomically); refuse to replace one unless asked.

    ``source`` records what the rows were made from (e.g. the report path and
    stage). Returns the file's path. Without ``overwrite`` the file is
    created exclusively (`rankproof._io.write_new`), not checked and then
    renamed: of several processes saving the same name at once exactly one
    succeeds and the others get the `ConfigError`, so no save is silently
    lost.
    """
    path = baseline_path(name, directory)
    exists = ConfigError(f"baseline {name!r} already exists ({path}); pass overwrite=True "
                         "(--force) to replace it")
    if path.exists() and not overwrite:
        raise exists
    doc = _BaselineFile(
        schema_version=SCHEMA_VERSION, kind="rankproof.baseline", name=name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"), tool_version=__version__,
        source=dict(source or {}), run=result.to_dict())
    text = json.dumps(doc.model_dump(mode="json"), indent=2, allow_nan=False) + "\n"
    if overwrite:
        with atomic_write(path) as fh:
            fh.write(text)
        return path
    try:
        write_new(path, text)
    except FileExistsError:
        raise exists from None
    return path


def _read(path: Path) -> Baseline:
    """Read and validate one baseline file; every failure is an `InputError` naming
    the path and the field (see `_BaselineDoc`)."""
    return baseline_from_document(read_document(path, what="baseline"), path)


def run_from_document(raw: Any, label: str) -> RunResult:
    """A `RunResult` from its parsed ``to_dict()`` form, every field's type checked first."""
    validate_model(raw, _RunDoc, label, what="run result", kind="rankproof run result")
    try:
        return RunResult.from_dict(raw)
    except InputError as exc:
        raise InputError(f"malformed run result: {exc}", path=label, field=exc.field) from None


def baseline_from_document(raw: Any, path: Path) -> Baseline:
    """A baseline from its parsed file (``path`` names it in messages and is recorded)."""
    doc = validate_model(raw, _BaselineDoc, str(path), what="baseline",
                         kind="rankproof baseline")
    try:
        result = RunResult.from_dict(raw["run"])
    except InputError as exc:
        raise InputError(f"malformed baseline run: {exc}", path=str(path),
                         field=exc.field and f"run.{exc.field}") from None
    return Baseline(name=doc.name, result=result, created_at=doc.created_at,
                    source=doc.source, path=path)


def load_baseline(ref: str | os.PathLike[str],
                  directory: str | os.PathLike[str] = DEFAULT_DIR) -> Baseline:
    """Load a baseline by name (from ``directory``) or by path (``…/x.json``, or an existing file).

    A reference is a path when it contains a path separator, ends in
    ``.json`` or names an existing file; otherwise it is a name.
    """
    text = os.fspath(ref)
    as_path = Path(text)
    if "/" in text or os.sep in text or text.endswith(SUFFIX) or as_path.is_file():
        return _read(as_path)
    path = baseline_path(text, directory)
    if not path.exists():
        have = [b.name for b in list_baselines(directory)] if Path(directory).is_dir() else []
        listing = f"; saved baselines: {', '.join(have)}" if have else "; none are saved there"
        raise ConfigError(f"no baseline named {shown(text)} in {directory}{listing}")
    return _read(path)


def list_baselines(directory: str | os.PathLike[str] = DEFAULT_DIR) -> tuple[Baseline, ...]:
    """Every baseline in ``directory``, by name; a malformed file raises naming it."""
    root = Path(directory)
    if not root.is_dir():
        return ()
    return tuple(_read(p) for p in sorted(root.glob(f"*{SUFFIX}")) if not p.name.startswith("."))


def compatibility_problems(current: RunProvenance, baseline: RunProvenance) -> list[str]:
    """Why ``current`` cannot be compared with ``baseline`` (empty when it can).

    A side that records no judgments digest (a comparison JSON keeps none)
    cannot be checked for different judgments; that is not a refusal, and
    `rankproof.gate.run_gate` stamps it into the verdict's notes instead.
    """
    problems = []
    if sorted(current.measures) != sorted(baseline.measures):
        problems.append(f"measure definitions differ: baseline {sorted(baseline.measures)}, "
                        f"this run {sorted(current.measures)}")
    if current.granularity != baseline.granularity:
        problems.append(f"granularity differs: baseline {shown(baseline.granularity)}, this "
                        f"run {shown(current.granularity)}")
    if None not in (current.judgments_digest, baseline.judgments_digest) \
            and current.judgments_digest != baseline.judgments_digest:
        problems.append(f"judgments differ: baseline digest {baseline.judgments_digest}, this "
                        f"run {current.judgments_digest}")
    return problems


def check_compatible(current: RunProvenance, baseline: RunProvenance, name: str) -> None:
    """Raise `ConfigError` listing every reason the two runs are not comparable."""
    problems = compatibility_problems(current, baseline)
    if problems:
        raise ConfigError(f"baseline {name!r} is not comparable with this run — "
                          + "; ".join(problems)
                          + ". Save a new baseline made the same way (rankproof baseline save).")
