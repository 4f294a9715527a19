"""The command line's shell: exit codes at the error boundary, ``--debug``, fast start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rankproof.cli.measure as measure_cli
from rankproof.cli import app

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
runner = CliRunner()

# Runs ``rankproof`` in a fresh interpreter with one library function replaced by a
# function that fails the way a bug would (an exception outside the RankproofError tree).
BUGGY = """\
import sys
import rankproof.measures as m
def evaluate(*args, **kwargs):
    raise ZeroDivisionError("a bug, planted by the test")
m.evaluate = evaluate
from rankproof.cli import main
sys.argv = ["rankproof", *sys.argv[1:]]
main()
"""


def _python(code: str, *args: str, env: dict[str, str] | None = None,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=False, input=stdin, cwd=REPO,
                          env={**os.environ, **(env or {})})


def _buggy(tmp_path: Path, *extra: str,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return _python(BUGGY, *extra, "measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run"),
                   env={"TMPDIR": str(tmp_path), "RANKPROOF_DEBUG": "", **(env or {})})


def test_internal_error_exits_3_with_one_line_and_a_saved_traceback(tmp_path: Path) -> None:
    proc = _buggy(tmp_path)
    assert proc.returncode == 3
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("internal error: ZeroDivisionError: a bug, planted by the test")
    assert "Traceback" not in proc.stderr and "--debug" in lines[0]
    saved = list(tmp_path.glob("rankproof-crash-*.txt"))
    assert len(saved) == 1 and str(saved[0]) in lines[0]
    text = saved[0].read_text()
    assert "Traceback (most recent call last)" in text
    assert "ZeroDivisionError: a bug, planted by the test" in text


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_prints_the_traceback_instead(tmp_path: Path, how: str) -> None:
    proc = (_buggy(tmp_path, "--debug") if how == "flag"
            else _buggy(tmp_path, env={"RANKPROOF_DEBUG": "1"}))
    assert proc.returncode == 3
    assert "Traceback (most recent call last)" in proc.stderr
    assert "ZeroDivisionError: a bug, planted by the test" in proc.stderr
    assert not list(tmp_path.glob("rankproof-crash-*.txt"))


def test_internal_error_in_process_is_exit_3(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    """The boundary inside the Typer app (CliRunner), not only in ``main``: a bare
    ``ValueError`` is a bug now, not bad input."""
    def evaluate(*args: object, **kwargs: object) -> None:
        raise ValueError("not a RankproofError")

    monkeypatch.setattr(measure_cli, "evaluate", evaluate)
    monkeypatch.setattr("rankproof.jobs._run_files.evaluate", evaluate)  # each run's task
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.delenv("RANKPROOF_DEBUG", raising=False)
    result = runner.invoke(app, ["measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run")])
    assert result.exit_code == 3
    assert "internal error: ValueError: not a RankproofError" in result.stderr
    assert len(list(tmp_path.glob("rankproof-crash-*.txt"))) == 1


def test_input_error_is_one_line_exit_2_printed_verbatim(tmp_path: Path) -> None:
    """Text from a file reaches the terminal as written: no Rich markup, escapes shown."""
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 [bold]x[/bold] r\n")
    result = runner.invoke(app, ["measure", str(TOY / "qrels.txt"), str(bad)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "[bold]x[/bold]" in result.stderr
    bad.write_bytes(b"q1 Q0 d1 1 \x1b[31mx r\n")
    result = runner.invoke(app, ["measure", str(TOY / "qrels.txt"), str(bad)])
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr and "\\x1b[31mx" in result.stderr


def test_usage_errors_keep_exit_2() -> None:
    result = runner.invoke(app, ["measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run"),
                                 "--topics", "some"])
    assert result.exit_code == 2
    assert runner.invoke(app, ["no-such-command"]).exit_code == 2


def test_version_is_answered_before_typer_is_imported() -> None:
    code = ("import sys; sys.argv = ['rankproof', '--version']\n"
            "from rankproof.cli import main\nmain()\n"
            "print(sorted(m for m in ('typer', 'rich', 'click', 'numpy') if m in sys.modules))")
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    version, loaded = proc.stdout.splitlines()
    assert version.startswith("rankproof ")
    assert loaded == "[]"


def test_help_lists_every_command_without_importing_them() -> None:
    code = ("import sys; sys.argv = ['rankproof', '--help']\n"
            "from rankproof.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('rankproof.cli.')"
            " and m != 'rankproof.cli._app'), 'scipy' in sys.modules)")
    proc = _python(code, env={"COLUMNS": "120"})
    assert proc.returncode == 0, proc.stderr
    for command in ("measure", "compare", "fuse", "eval", "gate", "baseline", "power", "adapt"):
        assert f" {command} " in proc.stdout
    assert proc.stdout.splitlines()[-1] == "[] False"


def test_measure_does_not_import_scipy() -> None:
    """Only commands that run statistics pay for scipy."""
    code = ("import sys\nsys.argv = ['rankproof', *sys.argv[1:]]\n"
            "from rankproof.cli import main\n"
            "try:\n    main()\nfinally:\n"
            "    print('scipy' in sys.modules, 'rankproof.stats' in sys.modules,"
            " file=sys.stderr)")
    proc = _python(code, "measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-m", "AP")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == "False False"


def test_help_shows_readable_metavars() -> None:
    for command in (["measure"], ["compare"], ["fuse"], ["gate"], ["baseline", "save"],
                    ["eval"]):
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "160"})
        assert result.exit_code == 0, result.output
        assert "list[" not in result.stdout and "<bool>" not in result.stdout, command
        assert "<path>" not in result.stdout and "<int>" not in result.stdout, command
    measure = runner.invoke(app, ["measure", "--help"], env={"COLUMNS": "160"}).stdout
    assert "QRELS RUN..." in measure
    assert "score|rank" in measure and "complete|intersection" in measure


def test_the_help_table_matches_each_command() -> None:
    """``--help`` lists commands from a table (to import none of them): keep it true."""
    import typer

    from rankproof.cli._app import COMMANDS

    group = typer.main.get_command(app)
    for name, (_, short) in COMMANDS.items():
        command = group.get_command(None, name)
        assert command is not None, name
        assert (command.help or "").strip().splitlines()[0] == short, name
