"""A throwaway PostgreSQL cluster for the test session: ``initdb`` + ``pg_ctl`` into a
temporary folder, as a non-root user (initdb refuses root: the tests run it as
``postgres`` through ``runuser`` when they are root), listening on a Unix socket in that
folder only (``listen_addresses=''``). Never a mock; skipped, saying why, when Debian's
``postgresql`` package is not installed (``scripts/system-deps.sh`` installs it)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def _bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A running cluster: `url(db)` for a fresh database on it."""

    def __init__(self, folder: Path, port: int, user: str, as_user: list[str],
                 bindir: Path) -> None:
        self.folder, self.port, self.user = folder, port, user
        self._as, self._bin = as_user, bindir

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self._as, *args], capture_output=True, text=True, timeout=120,
                              check=True)

    def create(self) -> str:
        """A new empty database's SQLAlchemy URL."""
        name = "rp_" + uuid.uuid4().hex[:12]
        self.run(str(self._bin / "createdb"), "-h", str(self.folder), "-p", str(self.port),
                 "-U", self.user, name)
        return (f"postgresql+psycopg://{self.user}@/{name}?host={self.folder}"
                f"&port={self.port}")


def postgres_cluster() -> Iterator[Cluster]:
    """The session fixture's body (started once, stopped at the end)."""
    bindir = _bin()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (Debian's postgresql: scripts/system-deps.sh)")
    folder = Path(tempfile.mkdtemp(prefix="rankproof-pg-"))
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run initdb as")
        os.chown(folder, account.pw_uid, account.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
        user = "postgres"
    else:
        as_user, user = [], pwd.getpwuid(os.geteuid()).pw_name
    data = folder / "data"
    port = _free_port()
    cluster = Cluster(folder, port, user, as_user, bindir)
    cluster.run(str(bindir / "initdb"), "-D", str(data), "-U", user, "--auth=trust",
                "-E", "UTF8", "--no-sync")
    opts = (f"-c listen_addresses='' -c unix_socket_directories={folder} -p {port} "
            f"-c fsync=off -c max_connections=50")
    cluster.run(str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-l",
                str(folder / "log"), "-w", "start")
    try:
        yield cluster
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "-w", "stop"], capture_output=True, timeout=120, check=False)
        shutil.rmtree(folder, ignore_errors=True)
