"""Progress of a long command on standard error: a Rich bar on a terminal, nothing elsewhere.

``measure`` and ``compare`` read their files, evaluate and (``compare``) resample in
stages. A stage is shown only when all of these hold:

* standard error is a terminal (a pipe, a file or a CI log gets nothing, so what a
  program reads is never mixed with bars, and standard output never carries them);
* the command was not given ``--quiet`` (also spelled ``--no-progress``);
* the stage is still running `DELAY_S` seconds after it began (a short command prints
  nothing at all; ``RANKPROOF_PROGRESS_DELAY`` sets another delay, ``0`` shows at once).

The bars are transient: they are erased when their stage ends, so the terminal keeps
the command's notes and its result and nothing of the display.

Reading is measured, not guessed: while the files are read, a small thread looks up
the kernel's file position of every descriptor this process holds open on each input
(``/proc/self/fdinfo``, Linux) and shows the bytes read of the files' total size with
an ETA. A file read elsewhere (a process or Ray worker of ``--engine``) or a system
without ``/proc`` shows the stage without byte counts.

Counted stages (`Stages.counting`) show ``done/planned UNIT`` with an ETA: resampling
(the statistics report row-resamples through a `rankproof.stats.ProgressCallback`, which
this module adapts, so that the library never imports Rich), target calls, sweep points,
cases scored. The library's callback only stores two integers; the bar is drawn by this
module's own thread, so a callback costs the loop that calls it nothing. A stage without a
count (evaluating, rendering) shows a spinner with its elapsed time.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from rich.progress import Progress

__all__ = ["DELAY_ENV", "DELAY_S", "Stages", "Steps", "quiet_option", "stages"]

DELAY_S = 1.0
"""A stage shorter than this shows nothing."""
DELAY_ENV = "RANKPROOF_PROGRESS_DELAY"
_POLL_S = 0.1


def quiet_option() -> Any:
    """The one ``--quiet`` / ``--no-progress`` of the commands that show progress."""
    return typer.Option(False, "--quiet", "--no-progress",
                        help="No progress display on standard error (it is shown only on a "
                             "terminal, and only for stages longer than a second).")


def _delay() -> float:
    raw = os.environ.get(DELAY_ENV, "")
    try:
        return max(0.0, float(raw)) if raw else DELAY_S
    except ValueError:
        return DELAY_S


def _stderr_is_terminal() -> bool:
    import sys

    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _positions(targets: dict[str, int]) -> dict[str, int]:
    """The largest file position of a descriptor open on each target (real path -> pos)."""
    found: dict[str, int] = {}
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for fd in fds:
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
            if where not in targets:
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as fh:
                pos = int(fh.readline().split()[1])
        except (OSError, ValueError, IndexError):
            continue
        found[where] = max(found.get(where, 0), pos)
    return found


class Stages:
    """One command's progress display; `stage` opens one stage of it.

    Disabled (off a terminal, ``--quiet``), every method does nothing and starts no thread.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._bar: Progress | None = None

    @contextlib.contextmanager
    def stage(self, description: str, *, files: Sequence[Path | str] = ()) -> Iterator[None]:
        """Show ``description`` (with the bytes read of ``files``, when given) while the
        block runs, from `DELAY_S` after it starts; erased when it ends."""
        if not self.enabled:
            yield
            return
        sizes: dict[str, int] = {}
        for f in files:
            with contextlib.suppress(OSError):
                if str(f) != "-" and Path(f).is_file():
                    sizes[os.path.realpath(f)] = os.path.getsize(f)
        with self._watching(description, "bytes" if sizes else "", _reader(sizes, description)):
            yield

    @contextlib.contextmanager
    def counting(self, description: str, unit: str) -> Iterator[Callable[[int, int], None]]:
        """Like `stage`, for a block that counts its work: yields a callback
        ``(done, planned)`` (a `rankproof.stats.ProgressCallback`) that the block's library
        code calls, and shows ``done/planned unit`` with an ETA. Disabled, the callback
        does nothing."""
        latest = [0, 0]

        def note(done: int, planned: int) -> None:
            latest[0], latest[1] = done, planned  # read by the watcher thread

        if not self.enabled:
            yield note
            return
        with self._watching(description, unit, lambda: (latest[0], latest[1], description)):
            yield note

    @contextlib.contextmanager
    def steps(self) -> Iterator[Steps]:
        """A block whose library code announces its phases one after another (`Steps`):
        each phase is shown as a stage until the next one begins; the last ends with the
        block."""
        phases = Steps(self)
        try:
            yield phases
        finally:
            phases.end()

    @contextlib.contextmanager
    def _watching(self, description: str, unit: str,
                  poll: Callable[[], tuple[int, int, str] | None]) -> Iterator[None]:
        done = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(description, unit, poll, done),
                                   name="rankproof-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            done.set()
            watcher.join()

    def _watch(self, description: str, unit: str,
               poll: Callable[[], tuple[int, int, str] | None], done: threading.Event) -> None:
        if done.wait(_delay()):
            return
        first = poll()
        with self._lock:
            bar = self._start()
            task = bar.add_task(description, total=(first[1] or None) if first else None,
                                unit=unit)
        while not done.wait(_POLL_S):
            now = poll()
            if now is not None:
                got, total, note = now
                bar.update(task, completed=got, total=total or None, description=note)
        with self._lock:
            bar.remove_task(task)
            if not bar.tasks:
                bar.stop()
                self._bar = None

    def _start(self) -> Progress:
        """The Rich display (started on the first stage shown), on standard error."""
        if self._bar is not None:
            return self._bar
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        from rankproof.report.console import make_console

        self._bar = Progress(
            SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
            _bytes_column(), _eta_column(), TimeElapsedColumn(),
            console=make_console(stderr=True), transient=True, redirect_stdout=False,
            redirect_stderr=True)
        self._bar.start()
        return self._bar

    def close(self) -> None:
        """Stop the display if a stage left it running (an error on the way out)."""
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None


class Steps:
    """The phases of a long library call, shown one at a time (`Stages.steps`).

    ``steps(words)`` (the library's ``progress(message)`` hook, e.g. the harness's) ends
    the phase shown and begins a spinner stage of ``words``; `counter` gives a
    ``(done, planned)`` callback (a `rankproof.stats.ProgressCallback`) whose first call
    begins a counted stage. Each phase keeps the stages' rules: nothing off a terminal,
    nothing before the delay.
    """

    def __init__(self, stages: Stages) -> None:
        self._stages = stages
        self._open = contextlib.ExitStack()
        self._counting: object | None = None

    def __call__(self, words: str) -> None:
        self.end()
        self._open.enter_context(self._stages.stage(words))

    def counter(self, words: str, unit: str) -> Callable[[int, int], None]:
        """A ``(done, planned)`` callback shown as ``words`` with ``done/planned unit``."""
        key = object()
        note: list[Callable[[int, int], None]] = []

        def tick(done: int, planned: int) -> None:
            if self._counting is not key:
                self.end()
                note[:] = [self._open.enter_context(self._stages.counting(words, unit))]
                self._counting = key
            note[0](done, planned)

        return tick

    def end(self) -> None:
        """End the phase shown (if any)."""
        self._counting = None
        self._open.close()
        self._open = contextlib.ExitStack()


def _reader(sizes: dict[str, int],
            description: str) -> Callable[[], tuple[int, int, str] | None]:
    """The poll of a stage that reads ``sizes`` (real path -> bytes): the bytes read so
    far from the kernel's file positions, and the stage's words (None without files:
    nothing to count)."""
    read = dict.fromkeys(sizes, 0)
    total = sum(sizes.values())

    def poll() -> tuple[int, int, str] | None:
        if not sizes:
            return None
        for path, pos in _positions(sizes).items():
            read[path] = min(max(read[path], pos), sizes[path])
        got = sum(read.values())
        return got, total, description if got < total else _after_reading(description)

    return poll


def _bytes_column() -> Any:
    """``12.3/290.0 MB`` for a stage that reads files, ``1,200/40,000 resamples`` for a
    counted one; nothing for one that counts nothing."""
    from rich.progress import DownloadColumn, ProgressColumn, Task
    from rich.text import Text

    class _Bytes(ProgressColumn):
        def __init__(self) -> None:
            super().__init__()
            self._inner = DownloadColumn()

        def render(self, task: Task) -> Text:
            if not task.total:
                return Text("")
            unit = task.fields.get("unit", "bytes")
            if unit == "bytes":
                return self._inner.render(task)
            return Text(f"{int(task.completed):,}/{int(task.total):,} {unit}")

    return _Bytes()


def _eta_column() -> Any:
    """The time left of a stage that reads files (from its bytes so far), else nothing."""
    from rich.progress import ProgressColumn, Task, TimeRemainingColumn
    from rich.text import Text

    class _Eta(ProgressColumn):
        def __init__(self) -> None:
            super().__init__()
            self._inner = TimeRemainingColumn()

        def render(self, task: Task) -> Text:
            if not task.total or task.finished:
                return Text("")
            return Text("ETA ").append_text(self._inner.render(task))

    return _Eta()


def _after_reading(description: str) -> str:
    """The words of a read-and-evaluate stage once every byte is read."""
    return description.replace("reading and evaluating", "evaluating", 1)


@contextlib.contextmanager
def stages(quiet: bool) -> Iterator[Stages]:
    """The command's `Stages`: shown on a terminal unless ``quiet``; closed on the way out."""
    shown = Stages(enabled=not quiet and _stderr_is_terminal())
    try:
        yield shown
    finally:
        shown.close()
