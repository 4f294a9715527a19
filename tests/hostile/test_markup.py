"""Class 1: text from input files is printed verbatim — never Rich markup, never raw escapes.

Each case runs the real command line in a fresh process (its output is a pipe,
as in CI) and checks that the text from the file reaches the reader as
written: ``[/x]`` stays ``[/x]`` (Rich would read it as a closing tag and, in
an error message, crash the error handler), ``[link=…]`` is not turned into a
terminal hyperlink, and an escape character is shown as ``\\x1b`` instead of
colouring (or clearing) the user's terminal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rankproof.comparison import compare
from rankproof.data import load_qrels, load_run
from rankproof.report.compare import comparison_markdown
from rankproof.report.console import escape_controls
from rankproof.report.table import means_table, render_text
from rankproof.stats import StatSettings

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"
QRELS = TOY / "qrels.txt"
ESC = "\x1b[31m"
LINK = "[link=https://example.com]click[/link]"


def rankproof(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rankproof", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=cwd,
                          encoding="utf-8", errors="surrogateescape")


def assert_clean(proc: subprocess.CompletedProcess[str]) -> None:
    """No raw escape (colour, OSC-8 hyperlink) in either stream, and no crash."""
    for stream in (proc.stdout, proc.stderr):
        assert "\x1b" not in stream, stream
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


def tagged_run(path: Path, tag: str, qid_suffix: str = "") -> Path:
    """The toy BM25 run with its tag (and optionally its qids) rewritten."""
    lines = []
    for line in (TOY / "bm25.run").read_text().splitlines():
        q, q0, d, r, s, _ = line.split()
        lines.append(f"{q}{qid_suffix} {q0} {d} {r} {s} {tag}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_duplicated_docid_that_looks_like_a_closing_tag(tmp_path: Path) -> None:
    run = tmp_path / "dup.run"
    run.write_text("q1 Q0 [/x] 1 2.0 r\nq1 Q0 [/x] 2 1.0 r\n")
    proc = rankproof("measure", QRELS, run)
    assert proc.returncode == 2, proc.stderr
    assert "(q1, [/x])" in proc.stderr and "line 2, field 'docid'" in proc.stderr
    assert_clean(proc)


def test_a_score_holding_a_hyperlink_is_quoted_not_linked(tmp_path: Path) -> None:
    run = tmp_path / "link.run"
    run.write_text(f"q1 Q0 d1 1 {LINK} r\n")
    proc = rankproof("measure", QRELS, run)
    assert proc.returncode == 2
    assert LINK in proc.stderr and "field 'score'" in proc.stderr
    assert_clean(proc)


def test_an_empty_file_is_named_with_its_brackets(tmp_path: Path) -> None:
    run = tmp_path / "run[bm25].run"
    run.write_text("")
    proc = rankproof("measure", QRELS, run)
    assert proc.returncode == 2
    assert f"{run}: the file is empty" in proc.stderr
    assert_clean(proc)


@pytest.mark.parametrize("per_query", [False, True])
def test_an_escape_in_a_run_tag_and_qids_is_shown_escaped_by_measure(
        tmp_path: Path, per_query: bool) -> None:
    run = tagged_run(tmp_path / "esc.run", f"{ESC}red", qid_suffix="")
    proc = rankproof("measure", QRELS, run, *(["-q"] if per_query else []))
    assert proc.returncode == 0, proc.stderr
    assert "\\x1b[31mred" in proc.stdout
    assert_clean(proc)
    # Qids carrying an escape: the per-query table and the notes name them escaped.
    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{ln.split()[0]}{ESC} {' '.join(ln.split()[1:])}\n"
                             for ln in QRELS.read_text().splitlines()))
    run2 = tagged_run(tmp_path / "esc2.run", "plain", qid_suffix=ESC)
    proc = rankproof("measure", qrels, run2, "-q")
    assert proc.returncode == 0, proc.stderr
    assert "q1\\x1b[31m" in proc.stdout
    assert_clean(proc)


def test_markup_in_a_run_tag_is_printed_as_written(tmp_path: Path) -> None:
    run = tagged_run(tmp_path / "m.run", "[bold]tag[/bold]")
    proc = rankproof("measure", QRELS, run, "-q")
    assert proc.returncode == 0, proc.stderr
    assert "[bold]tag[/bold]" in proc.stdout
    out = tmp_path / "table.txt"
    proc = rankproof("measure", QRELS, run, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "[bold]tag[/bold]" in out.read_text()


def test_compare_prints_names_verbatim_in_tables_notes_and_markdown(tmp_path: Path) -> None:
    a = tagged_run(tmp_path / "a.run", f"{ESC}base")
    b = tagged_run(tmp_path / "b.run", "[/x]cand")
    for fmt in ("table", "md"):
        proc = rankproof("compare", QRELS, a, b, "--resamples", "200", "-f", fmt)
        assert proc.returncode == 0, proc.stderr
        if fmt == "table":
            assert "[/x]cand" in proc.stdout and "\\x1b[31mbase" in proc.stdout
        else:  # Markdown-escaped, so a viewer shows the same text: [/x]cand, \x1b[31mbase
            assert "\\[/x\\]cand" in proc.stdout and "\\\\x1b\\[31mbase" in proc.stdout
        assert_clean(proc)


def test_power_quotes_a_pilot_comparisons_names_verbatim(tmp_path: Path) -> None:
    a = tagged_run(tmp_path / "a.run", f"{ESC}base")
    b = tagged_run(tmp_path / "b.run", f"{LINK}")
    pilot = tmp_path / "cmp.json"
    proc = rankproof("compare", QRELS, a, b, "--resamples", "200", "-m", "AP", "-o", pilot)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(pilot.read_text())["baseline"] == f"{ESC}base"
    proc = rankproof("power", "--pilot", pilot, "--simulations", "50")
    assert proc.returncode in (0, 2), proc.stderr
    assert_clean(proc)
    if proc.returncode == 0:
        assert LINK in proc.stdout


def test_fuse_names_a_bad_run_verbatim(tmp_path: Path) -> None:
    good = tagged_run(tmp_path / "good.run", "g")
    bad = tmp_path / "[red]bad.run"
    bad.write_text(f"q1 Q0 d1 1 2.0 {ESC}\nq1 Q0 d1 2 1.0 {ESC}\n")
    proc = rankproof("fuse", good, bad, "-o", tmp_path / "out.run")
    assert proc.returncode == 2
    assert "[red]bad.run" in proc.stderr
    assert not (tmp_path / "out.run").exists()
    assert_clean(proc)


def test_renderers_never_emit_control_characters() -> None:
    """The library renderers (Markdown, text tables) escape controls and keep markup."""
    qrels = load_qrels(QRELS)
    runs = {"[b]c\nd[/b]": load_run(TOY / "bm25.run"), f"{ESC}a|b": load_run(TOY / "dense.run")}
    md = comparison_markdown(compare(qrels, runs, "AP", stats=StatSettings(resamples=100)))
    assert "\x1b" not in md and "| \\x1b[31ma\\|b" in md and "[b]c\\nd[/b]" in md
    from rankproof.measures import evaluate

    pq = evaluate(qrels, load_run(TOY / "bm25.run", name=f"[i]{ESC}x"), "AP")
    text = render_text([means_table([pq])])
    assert "\x1b" not in text and "[i]\\x1b[31mx" in text
    assert escape_controls("a\tb\x07") == "a\\tb\\x07"


GATE_CHECKS = """\
checks:
  - id: "[red]floor\\e[31m|x"
    metric: nDCG@10
    op: ">="
    threshold: 0.9
"""


@pytest.mark.parametrize("fmt", ["table", "md", "junit"])
def test_gate_output_shows_check_ids_and_run_names_verbatim(
        fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Check ids come from the checks file and the run name from the report."""
    from rankproof.cli.gate import render
    from rankproof.gate import parse_checks, run_gate
    from rankproof.targets import CaseRow, RunProvenance, RunResult

    rows = tuple(CaseRow(case_id=c, values={"nDCG@10": v}, latency_ms=None)
                 for c, v in (("a", 0.5), ("b", 0.2)))
    result = RunResult(name=f"[b]run{ESC}", rows=rows, metrics=("nDCG@10",),
                       provenance=RunProvenance(kind="report", measures=("nDCG@10",)))
    verdict = run_gate(parse_checks(GATE_CHECKS), result)
    assert verdict.checks[0].id == f"[red]floor{ESC}|x"
    render(verdict, fmt)
    out = capsys.readouterr().out
    assert "\x1b" not in out
    if fmt != "junit":
        assert "[red]floor\\x1b[31m" in out
    if fmt == "table":
        assert "[b]run\\x1b[31m" in out
