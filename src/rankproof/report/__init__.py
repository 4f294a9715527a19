"""Renderers: turn results into text for terminals, files and CI systems.

Each output format is one module (``table``, ``trec``, ``records``, ``compare``,
``gate``, ``junit``); the CLI imports only the renderer a command needs, so
this package re-exports nothing.
"""

__all__: list[str] = []
