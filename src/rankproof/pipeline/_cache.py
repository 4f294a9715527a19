"""The content-addressed stage cache: keys, ``stage.json``, and atomic stage folders.

A stage's key is the sha256 of everything that decides its output: its kind and
normalised parameters, the digest of the inputs it reads (their content, not their
paths), the digests of the files it names (a run file, a checks file, a model folder),
the digests of its upstream stages' outputs, the rankproof version and the experiment's
seed (and, for stages that embed or rerank, the versions of the packages that compute
them). A rerun skips a stage whose ``stage.json`` holds the same key and whose output
files are all there with the digests it recorded.

A stage writes into a fresh temporary folder beside its own, ``stage.json`` last, and
the folder is then swapped in with renames: a stage that fails leaves the previous
output (and every other stage's) as it was and no half-written folder.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rankproof._errors import InputError
from rankproof._manifest import digest_json, file_digest, tool_version
from rankproof.data import parse_document

STAGE_FILE = "stage.json"
STAGE_KIND = "rankproof.stage"
SCHEMA_VERSION = 1


def stage_key(material: Mapping[str, Any]) -> str:
    """``sha256:…`` over the key material (canonical JSON) with the rankproof version."""
    return digest_json({"rankproof": tool_version(), **material})


def outputs_digest(record: Mapping[str, Any]) -> str:
    """The identity of a stage's output, as its downstream stages' keys see it."""
    external = record.get("external")
    return digest_json({"files": record.get("outputs", {}), "external": external})


def read_record(folder: Path) -> dict[str, Any] | None:
    """A stage folder's ``stage.json``, or None when there is none or it is unreadable."""
    path = folder / STAGE_FILE
    try:  # the one bounded reader: a deep or huge stage.json is a miss, never a crash
        data = parse_document(path.read_bytes(), str(path), what="stage record")
    except (OSError, InputError):
        return None
    if not isinstance(data, dict) or data.get("kind") != STAGE_KIND:
        return None
    return data


def valid_cache(folder: Path, key: str) -> dict[str, Any] | None:
    """The record of ``folder`` when it holds the output of ``key`` intact, else None."""
    record = read_record(folder)
    if record is None or record.get("key") != key or record.get("status") != "ok":
        return None
    outputs = record.get("outputs")
    if not isinstance(outputs, dict):
        return None
    for name, digest in outputs.items():
        path = folder / name
        if not path.is_file() or file_digest(path) != digest:
            return None
    return record


def check_stage_folder(folder: Path) -> None:
    """Refuse to replace a folder that ``rankproof run`` did not write."""
    if folder.exists() and (not folder.is_dir() or (any(folder.iterdir())
                                                    and read_record(folder) is None)):
        raise InputError("this stage's folder exists and was not written by rankproof run "
                         f"(no {STAGE_FILE}); move it away or change the output folder",
                         path=str(folder))


def new_workdir(output: Path, stage_id: str) -> Path:
    output.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{stage_id}.", suffix=".tmp", dir=output))


def digest_outputs(work: Path) -> dict[str, str]:
    """``{relative name: sha256}`` of every file the stage wrote (``stage.json`` aside)."""
    out: dict[str, str] = {}
    for p in sorted(work.rglob("*")):
        if p.is_file() and p.name != STAGE_FILE:
            out[p.relative_to(work).as_posix()] = file_digest(p)
    return out


def commit(work: Path, folder: Path, record: Mapping[str, Any]) -> None:
    """Write ``stage.json`` into ``work``, then swap ``work`` in as ``folder``."""
    data = json.dumps(record, indent=2, allow_nan=False) + "\n"
    with open(work / STAGE_FILE, "w", encoding="utf-8") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    old = None
    if folder.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".old",
                                    dir=folder.parent))
        os.rmdir(old)
        os.replace(folder, old)
    try:
        os.replace(work, folder)
    except BaseException:
        if old is not None:
            os.replace(old, folder)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def discard(work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
