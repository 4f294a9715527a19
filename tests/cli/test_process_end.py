"""How the ``rankproof`` process ends (`rankproof.cli.entry` / `end_process`, issue 28).

The console script ends the process with the command's own status once the
``atexit`` handlers have run and the streams are flushed, skipping only the
interpreter's module and object teardown, where native threads of dependencies
aborted finished commands. These tests pin what is kept: the status, the
``atexit`` handlers, a still-running thread's work, and the teardown itself on
request.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
MEASURE = ["measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-m", "AP"]

# Runs ``entry`` the way the console script does, with a planted atexit handler, a
# planted object whose finalizer runs only in the interpreter's teardown, and,
# optionally, a non-daemon thread that is still working when the command returns.
SCRIPT = """\
import atexit, sys, threading, time
from pathlib import Path
out = Path(sys.argv[1]); thread = sys.argv[2] == "thread"
atexit.register(lambda: (out / "atexit").write_text("ran"))
class Teardown:
    def __init__(self, path):
        self.path = str(path)
    def __del__(self, open=open):  # the module's globals may be gone by then
        with open(self.path, "w") as fh:
            fh.write("ran")
KEEP = Teardown(out / "teardown")
if thread:
    def late():
        time.sleep(0.5)
        (out / "thread").write_text("ran")
    threading.Thread(target=late).start()
sys.argv = ["rankproof", *sys.argv[3:]]
from rankproof.cli import entry
entry()
"""


def _entry(tmp_path: Path, *args: str, thread: bool = False,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    run_env = {k: v for k, v in os.environ.items() if k != "RANKPROOF_TEARDOWN"}
    return subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path),
                           "thread" if thread else "-", *args],
                          capture_output=True, text=True, check=False, cwd=REPO,
                          env={**run_env, **(env or {})}, timeout=120)


def test_the_status_is_the_commands_and_atexit_handlers_run(tmp_path: Path) -> None:
    proc = _entry(tmp_path, *MEASURE)
    assert proc.returncode == 0, proc.stderr
    assert "AP" in proc.stdout
    assert (tmp_path / "atexit").read_text() == "ran"
    # The object teardown, where native threads aborted the process, is skipped.
    assert not (tmp_path / "teardown").exists()


def test_bad_input_is_exit_2_through_entry(tmp_path: Path) -> None:
    empty = tmp_path / "empty.run"
    empty.write_text("")
    proc = _entry(tmp_path, "measure", str(TOY / "qrels.txt"), str(empty))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {empty}: the file is empty"
    assert (tmp_path / "atexit").read_text() == "ran"


def test_a_running_thread_is_joined_by_the_interpreters_teardown(tmp_path: Path) -> None:
    proc = _entry(tmp_path, *MEASURE, thread=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "thread").read_text() == "ran"


def test_the_interpreters_teardown_on_request(tmp_path: Path) -> None:
    proc = _entry(tmp_path, *MEASURE, env={"RANKPROOF_TEARDOWN": "interpreter"})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "teardown").read_text() == "ran"


def test_python_dash_m_and_the_console_script_both_end_through_entry() -> None:
    main = (REPO / "src" / "rankproof" / "__main__.py").read_text()
    assert "entry()" in main
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'rankproof = "rankproof.cli:entry"' in pyproject


def test_a_closed_pipe_is_still_exit_0(tmp_path: Path) -> None:
    """``rankproof measure … -q | head -1``: the reader goes away; the status stays 0."""
    args = [*MEASURE[:3], "-q", "-m", "AP", "-f", "csv"]
    proc = subprocess.run(f"{sys.executable} -m rankproof {' '.join(args)} | head -1; "
                          "echo status=${PIPESTATUS[0]}", shell=True, executable="/bin/bash",
                          capture_output=True, text=True, check=False, cwd=REPO, timeout=120)
    assert proc.stdout.splitlines()[-1] == "status=0", proc.stderr
