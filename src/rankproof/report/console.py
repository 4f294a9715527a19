"""The one way the command line makes a Rich console, prints a table, and prints an error.

Why one factory: output that is not a terminal (a pipe, a file, a CI log) is
read by programs and diffed by people, so it must carry every column and
every digit. Rich sizes a console from the terminal, or from ``COLUMNS``, or
falls back to 80 columns, and then squeezes tables to fit: ``0.5…``, numbers
folded mid-digit, whole columns gone. Here a console that is not writing to a
terminal gets an unbounded width, so a table prints at its natural width. On
a terminal narrower than a table, `print_table` splits the table's columns
into blocks that fit (the first column repeated in each, as pandas does),
so rows wrap instead of losing columns.

Text that comes from files (ids, paths, messages quoting a line) is never
passed through Rich markup: `plain` makes a `rich.text.Text` with control
characters escaped, so ``[bold]`` in a qrels file prints as written and an
escape sequence cannot reach the terminal.
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

__all__ = ["UNBOUNDED_WIDTH", "escape_controls", "make_console", "plain", "print_table"]

UNBOUNDED_WIDTH = 1_000_000
"""The width of a console that writes to a pipe or a file: wide enough for any table."""


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def make_console(*, stderr: bool = False, file: IO[str] | None = None) -> Console:
    """A console for standard output (or standard error, or ``file``).

    On a terminal Rich sizes it as usual; anywhere else its width is
    unbounded and colour is off, so nothing is truncated or wrapped.
    """
    from rich.console import Console

    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    if _is_terminal(stream):
        return Console(file=file, stderr=stderr, highlight=False)
    return Console(file=file, stderr=stderr, highlight=False, width=UNBOUNDED_WIDTH,
                   no_color=True, color_system=None, soft_wrap=False)


def escape_controls(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every non-printable character written as its escape (``\\x1b``, ``\\n``),
    newlines kept when ``keep_newlines``."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or (keep_newlines and c == "\n") else repr(c)[1:-1]
                   for c in text)


def plain(text: str, style: str = "", *, keep_newlines: bool = False) -> Text:
    """Text shown exactly as written: no markup, control characters escaped (a one-line
    message stays one line unless ``keep_newlines``)."""
    from rich.text import Text

    return Text(escape_controls(text, keep_newlines=keep_newlines), style=style)


def _natural_width(console: Console, table: Table) -> int:
    from rich.measure import Measurement

    options = console.options.update(width=UNBOUNDED_WIDTH, max_width=UNBOUNDED_WIDTH)
    return Measurement.get(console, options, table).maximum


def _column_blocks(table: Table, console: Console, width: int) -> list[list[int]]:
    """Indices of the columns after the first, grouped into blocks that fit ``width``."""
    from rich.measure import Measurement

    options = console.options.update(width=UNBOUNDED_WIDTH, max_width=UNBOUNDED_WIDTH)
    widths = []
    for column in table.columns:
        cells = [column.header, *column.cells]
        widths.append(max(Measurement.get(console, options, c).maximum for c in cells) + 3)
    blocks: list[list[int]] = [[]]
    used = widths[0] + 1
    for i in range(1, len(widths)):
        if blocks[-1] and used + widths[i] > width:
            blocks.append([])
            used = widths[0] + 1
        blocks[-1].append(i)
        used += widths[i]
    return blocks


def _verbatim(cell: Any) -> Any:
    return plain(cell, keep_newlines=True) if isinstance(cell, str) else cell


def _sub_table(table: Table, keep: list[int], first: bool) -> Table:
    """A copy of ``table`` with the columns ``keep``; every string becomes verbatim text."""
    from rich.table import Table

    out = Table(title=_verbatim(table.title) if first else None,
                caption=_verbatim(table.caption), title_justify=table.title_justify,
                caption_justify=table.caption_justify, box=table.box,
                safe_box=table.safe_box, show_header=table.show_header,
                show_footer=table.show_footer, show_edge=table.show_edge,
                show_lines=table.show_lines, pad_edge=table.pad_edge,
                collapse_padding=table.collapse_padding, padding=table.padding,
                expand=table.expand, width=table.width, min_width=table.min_width,
                leading=table.leading, style=table.style, row_styles=table.row_styles,
                header_style=table.header_style, footer_style=table.footer_style,
                border_style=table.border_style, title_style=table.title_style,
                caption_style=table.caption_style, highlight=table.highlight)
    columns = [table.columns[i] for i in keep]
    for column in columns:
        out.add_column(_verbatim(column.header), footer=_verbatim(column.footer),
                       justify=column.justify, vertical=column.vertical,
                       overflow=column.overflow, width=column.width,
                       min_width=column.min_width, max_width=column.max_width,
                       ratio=column.ratio, no_wrap=column.no_wrap, style=column.style,
                       header_style=column.header_style, footer_style=column.footer_style,
                       highlight=column.highlight)
    cells = [list(column.cells) for column in columns]
    for r, row in enumerate(table.rows):
        out.add_row(*[_verbatim(c[r]) for c in cells], style=row.style,
                    end_section=row.end_section)
    return out


def print_table(console: Console, table: Table) -> None:
    """Print ``table`` whole: at its natural width, or in column blocks on a narrow terminal.

    Strings in the table (title, headers, cells) print verbatim: run names,
    topic ids and check ids come from files, and Rich would read ``[bold]`` in
    one of them as markup.
    """
    width = console.width
    if width >= UNBOUNDED_WIDTH or len(table.columns) < 3 \
            or _natural_width(console, table) <= width:
        console.print(_sub_table(table, list(range(len(table.columns))), first=True))
        return
    blocks = _column_blocks(table, console, width)
    for n, block in enumerate(blocks):
        if n:
            console.print()
        console.print(_sub_table(table, [0, *block], first=n == 0))
