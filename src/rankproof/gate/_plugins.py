"""``rankproof gate --plugin MODULE``: import code that registers metrics before the gate runs.

A checks file may name a metric its project defines (``register_metric`` in
the project's own code). From Python the project imports that code itself;
from the command line nothing would, so ``--plugin`` imports it: a dotted
module name importable from the current directory or ``sys.path``
(``evals.metrics``), or a path to a ``.py`` file (``evals/metrics.py``,
whose folder is importable while it runs, as with ``python FILE.py``).
Metric names are resolved when the gate runs, after every plugin was
imported, so the order of ``--plugin`` and the checks file does not matter.

A plugin that cannot be imported — not found, a syntax error, an exception
while it runs, a metric name it registers that is taken — is a
`ConfigError` naming the module and what went wrong, never a traceback.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

from rankproof._errors import ConfigError, RankproofError, note_user_code
from rankproof._limits import shown

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def import_plugin(spec: str) -> ModuleType:
    """Import the plugin ``spec`` (a dotted module name or a ``.py`` path); see the module."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"--plugin {shown(spec)}: give a dotted module name (evals.metrics) "
                          "or a path to a .py file")
    spec = spec.strip()
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        return _import_file(spec)
    if not _DOTTED.match(spec):
        raise ConfigError(f"--plugin {spec!r} is neither a dotted module name (evals.metrics) "
                          "nor a path to a .py file")
    # `python -m` puts the current directory first on sys.path; a console script does not
    with _on_path(os.getcwd(), also_empty=True):
        return _run(spec, lambda: importlib.import_module(spec))


@contextlib.contextmanager
def _on_path(folder: str, *, also_empty: bool = False) -> Iterator[None]:
    """``folder`` first on ``sys.path`` while the plugin imports (unless already there)."""
    added = folder not in sys.path and not (also_empty and "" in sys.path)
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)


def _import_file(spec: str) -> ModuleType:
    path = Path(spec)
    if not path.is_file():
        raise ConfigError(f"--plugin {spec!r}: no such file"
                          + ("" if spec.endswith(".py") else " (a module name has no '/')"))
    stem = re.sub(r"\W", "_", path.stem)
    name = f"rankproof_plugin_{stem}"
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ConfigError(f"--plugin {spec!r}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(loader_spec)
    loader = loader_spec.loader

    def load() -> ModuleType:
        sys.modules[name] = module
        try:
            loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module

    # as `python FILE.py` does, the file's folder is importable while it runs
    with _on_path(str(path.resolve().parent)):
        return _run(spec, load)


def _run(spec: str, load: Callable[[], ModuleType]) -> ModuleType:
    """Call ``load`` and turn whatever it raises into a `ConfigError` naming the plugin."""
    try:
        module = load()
    except ModuleNotFoundError as exc:
        if exc.name is not None and (spec == exc.name or spec.startswith(exc.name + ".")):
            raise ConfigError(f"--plugin {spec!r}: no module named {exc.name!r} importable from "
                              f"the current directory ({os.getcwd()}) or sys.path; give a "
                              "dotted module name or a path to a .py file") from None
        raise ConfigError(f"--plugin {spec!r}: importing it failed: {exc}") from None
    except SyntaxError as exc:
        where = f" ({exc.filename}, line {exc.lineno})" if exc.filename else ""
        raise ConfigError(f"--plugin {spec!r}: syntax error{where}: {exc.msg}") from None
    except RankproofError as exc:
        raise ConfigError(f"--plugin {spec!r}: importing it failed: {exc}") from None
    except (Exception, SystemExit) as exc:  # the plugin's own code failed while it ran
        raise ConfigError(f"--plugin {spec!r}: importing it raised {type(exc).__name__}: "
                          f"{exc}") from None
    note_user_code(getattr(module, "__file__", None))  # its metrics' errors are the user's
    return module
