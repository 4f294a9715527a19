"""The package version: the one place it is written.

``pyproject.toml`` reads it from here (``[tool.setuptools.dynamic]``), so the
installed metadata and ``rankproof --version`` cannot disagree, and no command
pays for ``importlib.metadata`` (~30 ms) just to learn its own version.
"""

__version__ = "0.1.0"
