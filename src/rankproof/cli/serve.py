"""``rankproof serve``: the read-only dashboard over the results history."""

from __future__ import annotations

import typer

from rankproof.cli._app import app, error_boundary
from rankproof.cli._history import store_option, store_url
from rankproof.report.console import make_console, plain


@app.command("serve")
@error_boundary
def serve_command(
    history: str | None = store_option(),
    host: str = typer.Option("127.0.0.1", "--host", metavar="HOST",
                             help="Address to bind (127.0.0.1 unless told otherwise)."),
    port: int = typer.Option(8765, "--port", metavar="PORT", min=0, max=65535),
) -> None:
    """A read-only local dashboard over the results history.

    Results with filters, a trend page per measure, result, query and comparison pages.
    """
    from rankproof.web import serve

    make_console(stderr=True).print(plain(f"serving the history at http://{host}:{port}/ "
                                          "(read-only; Ctrl-C stops)"))
    serve(store_url(history), host=host, port=port)
