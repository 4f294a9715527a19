"""The read-only dashboard over the results history (``rankproof serve``).

* `create_app(url)` — the Starlette application: the list of results with filters, a
  trend page per measure with its significance markers, a result page (the HTML report's
  view of the stored document), a query page (its values across the history and the
  "since when" answer) and a comparison of any two results with their regressions.
* `serve(url, host, port)` — run it with uvicorn; binds 127.0.0.1 unless told otherwise.

It needs the ``serve`` extra (Starlette, uvicorn) and the ``history`` extra.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "create_app", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def create_app(url: str | None = None, store: Any = None) -> Any:
    """The dashboard's ASGI application (see `rankproof.web._app.create_app`)."""
    try:
        from rankproof.web._app import create_app as build
    except ImportError as exc:
        from rankproof._errors import MissingExtraError

        raise MissingExtraError(f"the dashboard needs the 'serve' extra ({exc.name} is "
                                f"missing): pip install 'rankproof[serve,history]'") from None
    return build(url, store)


def serve(url: str | None = None, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Serve the dashboard until interrupted."""
    app = create_app(url)
    try:
        import uvicorn
    except ImportError:
        from rankproof._errors import MissingExtraError

        raise MissingExtraError("the dashboard needs uvicorn: pip install "
                                "'rankproof[serve]'") from None
    uvicorn.run(app, host=host, port=port, log_level="warning")
