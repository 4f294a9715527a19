"""An exception raised by the user's own code is the user's: exit 2 naming it (issue 22, item 7).

A ``--retriever MODULE:CALLABLE`` that raised used to be reported as
"internal error: ... (a bug in rankproof)", exit 3. The CLI's error boundary
now asks `rankproof._errors.user_code_error` whether the traceback passed
through code outside rankproof, the standard library and the installed
packages; if so it names that function, its error and the line, and exits 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from rankproof import RankproofError, UserCodeError
from rankproof._errors import _USER_FOLDERS, note_user_code, user_code_error
from rankproof.cli import app
from rankproof.engine import LocalExecutor

TOY = Path(__file__).resolve().parents[2] / "examples" / "toy"
runner = CliRunner()


def cli(*args: str) -> Result:
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    before = set(sys.modules)
    yield tmp_path
    from rankproof.measures._registry import _unregister

    _unregister("t_broken_cases")  # unknown names are ignored
    for name in set(sys.modules) - before:
        if name.startswith(("rankproof_plugin_", "t_broken_")):
            del sys.modules[name]


def _boom() -> None:
    raise ValueError("the index is missing")


def _boom_item(item: int) -> None:
    _boom()


@pytest.fixture
def user_folders() -> Iterator[set[str]]:
    """`note_user_code`'s registry, restored afterwards."""
    saved = set(_USER_FOLDERS)
    yield _USER_FOLDERS
    _USER_FOLDERS.clear()
    _USER_FOLDERS.update(saved)


def test_code_rankproof_did_not_load_for_the_user_is_not_theirs(user_folders: set[str]
                                                                 ) -> None:
    # a test's stand-in for a rankproof function (tests/cli/test_app.py) stays a bug
    with pytest.raises(ValueError) as got:
        LocalExecutor(1).map(_boom_item, [1])
    assert user_code_error(got.value) is None


def test_an_error_from_a_function_outside_rankproof_is_the_users(user_folders: set[str]
                                                                  ) -> None:
    note_user_code(__file__)  # as --retriever / --plugin do for the module they load
    with pytest.raises(ValueError) as got:
        _boom()
    user = user_code_error(got.value)  # the test called it itself: the outermost is named
    assert user is not None and user.function.endswith("_is_the_users")
    with pytest.raises(ValueError) as got:
        LocalExecutor(1).map(_boom_item, [1])  # entered from rankproof's own code
    user = user_code_error(got.value)
    assert isinstance(user, UserCodeError) and isinstance(user, RankproofError)
    assert isinstance(user, RuntimeError)
    assert user.function == f"{__name__}._boom_item"
    assert user.error == "ValueError: the index is missing"
    assert user.where is not None and user.where.startswith("test_user_code_errors.py, line ")
    assert str(user).startswith(f"your function {__name__}._boom_item raised ValueError: the")


def test_an_error_raised_inside_rankproof_or_a_library_stays_internal(
        user_folders: set[str]) -> None:
    import numpy as np

    note_user_code(__file__)

    from rankproof.data._bounds import field_path

    def below_this_test(exc: BaseException) -> BaseException:
        # as at the CLI's boundary: the traceback starts in rankproof, not in a caller
        assert exc.__traceback__ is not None
        return exc.with_traceback(exc.__traceback__.tb_next)

    with pytest.raises(TypeError) as got:
        field_path(5)  # type: ignore[arg-type]
    assert user_code_error(below_this_test(got.value)) is None
    with pytest.raises(ValueError) as lib:
        np.zeros(3).reshape(2)
    assert user_code_error(below_this_test(lib.value)) is None
    assert user_code_error(RankproofError("mine already")) is None


def test_a_retriever_that_raises_exits_2_naming_it(project: Path) -> None:
    (project / "t_broken_svc.py").write_text(
        "def search(query, k):\n"
        "    raise RuntimeError('search index not built')\n")
    cases = project / "cases.jsonl"
    cases.write_text('{"query": "check my tables", "gold": ["pipeline-scheduler"]}\n')
    r = cli("discover", str(cases), "--retriever", "t_broken_svc:search")
    assert r.exit_code == 2, r.output
    assert ("your function t_broken_svc.search raised RuntimeError: search index not built "
            "(at t_broken_svc.py, line 2)") in r.stderr
    assert "bug in rankproof" not in r.output and "Traceback" not in r.output


BROKEN_PLUGIN = """\
from rankproof.measures import register_aggregate


@register_aggregate("t_broken_cases", higher_is_better=True)
def cases(rows):
    return 1.0 / 0
"""

CHECKS = """\
checks:
  - id: enough_cases
    metric: t_broken_cases
    op: ">="
    threshold: 8
"""


def test_a_plugin_metric_that_raises_exits_2_naming_it(project: Path) -> None:
    made = cli("measure", str(TOY / "qrels.txt"), str(TOY / "bm25.run"), "-f", "json", "-o",
               "bm25.json")
    assert made.exit_code == 0, made.output
    (project / "checks.yaml").write_text(CHECKS)
    (project / "broken_metrics.py").write_text(BROKEN_PLUGIN)
    r = cli("gate", "checks.yaml", "--report", "bm25.json", "--plugin", "broken_metrics.py")
    assert r.exit_code == 2, r.output
    # the gate words it itself, by the metric's name (already the user's error)
    assert "aggregate 't_broken_cases' raised ZeroDivisionError: float division by zero" \
        in r.stderr
    assert "bug in rankproof" not in r.output


def test_debug_also_prints_the_traceback(project: Path) -> None:
    (project / "t_broken_dbg.py").write_text(
        "def search(query, k):\n    raise KeyError('k')\n")
    cases = project / "cases.jsonl"
    cases.write_text('{"query": "check my tables", "gold": ["pipeline-scheduler"]}\n')
    r = cli("--debug", "discover", str(cases), "--retriever", "t_broken_dbg:search")
    assert r.exit_code == 2, r.output
    assert "Traceback" in r.stderr and "your function t_broken_dbg.search raised KeyError" \
        in r.stderr


def test_an_error_from_a_process_pool_worker_is_found_in_its_remote_traceback(
        tmp_path: Path, user_folders: set[str]) -> None:
    from concurrent.futures import process
    from concurrent.futures.process import _RemoteTraceback

    user_file = tmp_path / "my_search.py"
    remote = ('\n"""\nTraceback (most recent call last):\n'
              f'  File "{process.__file__}", line 256, in _process_worker\n'
              f'  File "{user_file}", line 3, in search\n'
              f'  File "{user_file}", line 7, in _lookup\n'
              'ValueError: no index\n"""')
    exc = ValueError("no index")
    exc.__cause__ = _RemoteTraceback(remote)
    assert user_code_error(exc) is None  # not loaded for the user
    note_user_code(user_file)
    user = user_code_error(exc)
    assert user is not None and user.function == "my_search.search"
    assert user.where == "my_search.py, line 7"
    assert user_code_error(ValueError("no cause")) is None
