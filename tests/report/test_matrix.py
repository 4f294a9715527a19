"""The systems × measures table: one view (`rankproof.report.matrix`), four renderers that agree.

On the five TREC DL 2019 passage runs of ../shared/data/rankllm_runs (BM25, RM3, TAS-B,
ada2, SPLADE++; see its PROVENANCE.md) on nDCG@10, AP, RR and R@100: the terminal,
Markdown, HTML and wide LaTeX forms show the same numbers, the same bold best values and
the same marks; the LaTeX compiles with pdflatex; every caveat and footnote of the JSON
reaches all four; all-pairs letters follow the Tukey HSD rows; the HTML report leads with
the table and folds the rows with no detectable difference unless asked for detail.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from tests.report.test_latex import compile_fragment, needs_pdflatex, pdf_text
from typer.testing import CliRunner

from rankproof.cli import app
from rankproof.report.document import read
from rankproof.report.html import render_html
from rankproof.report.latex import render_latex, tex_text
from rankproof.report.markdown import render_markdown
from rankproof.report.view import Matrix, View
from rankproof.report.views import build

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
RUNS = DATA / "rankllm_runs"
QRELS = DATA / "trec_dl" / "qrels.dl19-passage.txt"
FIXTURES = Path(__file__).parent / "fixtures"
SYSTEMS = {"BM25": "BM25", "RM3": "BM25_RM3", "TAS-B": "D_BERT_KD_TASB",
           "ada2": "OPEN_AI_ADA2", "SPLADE++": "SPLADE_P_P_ENSEMBLE_DISTIL"}
MEASURES = ("nDCG@10", "AP", "RR", "R@100")
#: nDCG@10 of these top-100 runs as pyserini publishes them (PROVENANCE.md).
PUBLISHED_NDCG10 = {"BM25": "0.5058", "RM3": "0.5216", "TAS-B": "0.7210", "ada2": "0.7035",
                    "SPLADE++": "0.7308"}
NUMBER = re.compile(r"\d\.\d{4}")

runner = CliRunner()
pytestmark = pytest.mark.skipif(not QRELS.exists(), reason="../shared/data is not present")


def compare_args(*extra: str) -> list[str]:
    args = ["compare", str(QRELS), *(str(RUNS / d / "trec_results_dl19.txt")
                                     for d in SYSTEMS.values())]
    for name in SYSTEMS:
        args += ["--name", name]
    for m in MEASURES:
        args += ["-m", m]
    return [*args, *extra]


def invoke(*args: str) -> tuple[str, str]:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


@pytest.fixture(scope="module")
def dl19(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The comparison JSON, and the terminal output (stdout, stderr) of the same call."""
    out = tmp_path_factory.mktemp("dl19") / "cmp.json"
    stdout, stderr = invoke(*compare_args("-o", str(out)))
    return out, stdout, stderr


@pytest.fixture(scope="module")
def dl19_all(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    out = tmp_path_factory.mktemp("dl19all") / "cmp.json"
    stdout, stderr = invoke(*compare_args("--pairs", "all", "-o", str(out)))
    return out, stdout, stderr


def view_of(path: Path) -> View:
    return build(read(path))


def matrix_of(path: Path) -> Matrix:
    m = view_of(path).matrix
    assert m is not None
    return m


def _row_line(lines: list[str], system: str) -> str:
    found = [ln for ln in lines if re.match(rf"^{re.escape(system)}(?![\w+-])", ln.strip("| "))]
    assert len(found) == 1, (system, lines)
    return found[0]


def terminal_numbers(text: str, system: str) -> list[str]:
    lines = text.split("\n\n")[0].splitlines()
    return NUMBER.findall(_row_line(lines, system))


def markdown_cells(text: str, system: str) -> list[str]:
    line = _row_line([ln for ln in text.splitlines() if ln.startswith("| ")], system)
    return [c.strip() for c in line.strip().strip("|").split(" | ")][1:]


def html_cells(page: str, system: str) -> list[str]:
    table = page.split('<table class="matrix" id="matrix">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>", 1)[1])
    row = [r for r in rows if re.match(rf"<td>{re.escape(html.escape(system))}(?![\w+-])", r)]
    assert len(row) == 1, system
    return re.findall(r"<td[^>]*>(.*?)</td>", row[0])[1:]


def latex_cells(fragment: str, system: str) -> list[str]:
    body = fragment.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    line = _row_line([ln for ln in body.splitlines() if ln.endswith(r"\\")],
                     tex_text(system))
    return line.removesuffix(r" \\").split(" & ")[1:]


def test_the_dl19_table_is_the_published_one_in_every_format(
        dl19: tuple[Path, str, str]) -> None:
    path, terminal, _ = dl19
    view = view_of(path)
    m = view.matrix
    assert m is not None
    assert [r.system for r in m.rows] == list(SYSTEMS) and m.rows[0].is_baseline
    assert m.columns == MEASURES
    assert {r.system: r.cells[0].text for r in m.rows} == PUBLISHED_NDCG10
    md = render_markdown(view)
    page = render_html(view)
    tex = render_latex(view)  # wide is the default
    assert tex == render_latex(view, style="wide") != render_latex(view, style="long")
    for row in m.rows:
        texts = [c.text for c in row.cells]
        assert terminal_numbers(terminal, row.system) == texts
        assert [NUMBER.search(c).group() for c in markdown_cells(md, row.system)] == texts
        assert [NUMBER.search(c).group() for c in html_cells(page, row.system)] == texts
        assert [NUMBER.search(c).group() for c in latex_cells(tex, row.system)] == texts
        for cell, mc, hc, lc in zip(row.cells, markdown_cells(md, row.system),
                                    html_cells(page, row.system),
                                    latex_cells(tex, row.system), strict=True):
            assert mc.startswith(f"**{cell.text}**") == cell.best
            assert (f"<b>{cell.text}</b>" in hc) == cell.best
            assert lc.startswith(rf"\textbf{{{cell.text}}}") == cell.best
            better = cell.mark == "better"
            assert ("†" in mc) == better and ("†" in hc) == better
            assert (r"\dagger" in lc) == better
            assert ("‡" in mc) == ("‡" in hc) == (r"\ddagger" in lc) == (cell.mark == "worse")
    # SPLADE++ is the best run on all four measures; its bold cells are the only ones.
    assert [c.best for r in m.rows for c in r.cells] == [r.system == "SPLADE++"
                                                         for r in m.rows for _ in MEASURES]
    # Marks are the stored verdicts, at the corrected level.
    for v in view.verdicts:
        cell = next(r for r in m.rows if r.system == v.candidate).cells[
            m.measures.index(v.measure)]
        assert cell.mark == {"better": "better", "worse": "worse"}.get(v.verdict, "")
    assert "Holm over the family of 16 tests" in m.legend[1] and "α = 0.05" in m.legend[1]


def test_every_caveat_and_footnote_reaches_all_four_formats(
        dl19_all: tuple[Path, str, str]) -> None:
    path, terminal, stderr = dl19_all
    doc = json.loads(path.read_text(encoding="utf-8"))
    strings = [*doc["caveats"], *(n for r in doc["rows"] for n in r["notes"])]
    assert doc["caveats"] and any(r["notes"] for r in doc["rows"])  # both kinds present
    view = view_of(path)
    md = render_markdown(view)
    md_plain = re.sub(r"\\(.)", r"\1", md)
    page = html.unescape(render_html(view))
    tex = render_latex(view)
    for s in dict.fromkeys(strings):
        assert s in terminal + stderr, s
        assert s in md_plain, s
        assert s in page.split('id="matrix"', 1)[1].split("</section>", 1)[0], s
        assert tex_text(s, clip=1_000) in tex, s
    # Each footnote is printed once in the terminal, whatever the number of cells it concerns.
    for note in view.matrix.footnotes if view.matrix else ():
        assert terminal.count(note) == 1


def test_all_pairs_letters_follow_the_tukey_rows(dl19_all: tuple[Path, str, str]) -> None:
    path, terminal, _ = dl19_all
    view = view_of(path)
    m = view.matrix
    assert m is not None and m.pairs == "all"
    letters = {r.system: r.letter for r in m.rows}
    assert list(letters.values()) == ["a", "b", "c", "d", "e"]
    expected: dict[tuple[str, str], set[str]] = {}
    for v in view.verdicts:
        assert v.correction == "tukey-hsd"
        if v.verdict == "better":
            expected.setdefault((v.candidate, v.measure), set()).add(letters[v.baseline])
        elif v.verdict == "worse":
            expected.setdefault((v.baseline, v.measure), set()).add(letters[v.candidate])
    assert expected  # the dense runs beat BM25 on nDCG@10
    for row in m.rows:
        for measure, cell in zip(m.measures, row.cells, strict=True):
            assert set(cell.beats) == expected.get((row.system, measure), set())
            assert cell.mark == ""
    assert "Tukey HSD over the 10 pairs of each measure" in " ".join(m.legend)
    # The terminal writes the letters as superscripts: SPLADE++ beats BM25 and RM3 on nDCG@10.
    assert "0.7308ᵃᵇ" in terminal


@needs_pdflatex
def test_the_wide_table_compiles(dl19: tuple[Path, str, str], tmp_path: Path) -> None:
    path, _, _ = dl19
    view = view_of(path)
    fragment = render_latex(view)
    assert fragment.count(r"\begin{tabular}{lrrrr}") == 1
    assert fragment.count(r"\toprule") == fragment.count(r"\bottomrule") == 1
    pdf = compile_fragment(fragment, tmp_path)
    text = pdf_text(pdf)
    if text is not None:
        assert view.matrix is not None
        for row in view.matrix.rows:
            assert row.system in text
            for cell in row.cells:
                assert cell.text in text
        assert "SPLADE++ Judged@100 = 0.52" in text


@needs_pdflatex
def test_the_long_table_still_compiles_and_carries_the_caveats(
        dl19_all: tuple[Path, str, str], tmp_path: Path) -> None:
    view = view_of(dl19_all[0])
    fragment = render_latex(view, style="long")
    assert r"\begin{tabular}{llrrrrrrr}" in fragment
    for caveat in view.caveats:
        assert tex_text(caveat, clip=1_000) in fragment
    compile_fragment(fragment, tmp_path)


def test_compare_latex_is_the_report_latex(dl19: tuple[Path, str, str],
                                           tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    for style in ("wide", "long"):
        fragment, _ = invoke(*compare_args("-o", str(out), "--force", "-f", "latex",
                                           "--latex-style", style))
        again, _ = invoke("report", str(out), "--latex", "-", "--latex-style", style)
        assert fragment == again
        assert ("{lrrrr}" in fragment) == (style == "wide")
    bad = runner.invoke(app, ["report", str(out), "--latex", "-", "--latex-style", "tall"])
    assert bad.exit_code == 2 and "--latex-style" in bad.stderr


def test_detail_tables_only_on_request(dl19: tuple[Path, str, str]) -> None:
    _, terminal, _ = dl19
    assert "5 systems × 4 measures" in terminal and "W/T/L" not in terminal
    detailed, _ = invoke(*compare_args("--detail", "--resamples", "2000"))
    assert "5 systems × 4 measures" in detailed and detailed.count("W/T/L") == 4
    md, _ = invoke(*compare_args("-f", "md", "--resamples", "2000"))
    assert md.startswith("# comparison: 5 systems against BM25")
    assert "## 5 systems × 4 measures" in md and md.count("### nDCG@10:") == 0
    # One candidate: the detail table, as before.
    one = runner.invoke(app, ["compare", str(QRELS), str(RUNS / "BM25/trec_results_dl19.txt"),
                              str(RUNS / "BM25_RM3/trec_results_dl19.txt"), "-m", "nDCG@10",
                              "--resamples", "500"])
    assert one.exit_code == 0 and "W/T/L" in one.stdout and "systems ×" not in one.stdout


def test_the_html_report_leads_with_the_answer(dl19: tuple[Path, str, str]) -> None:
    view = view_of(dl19[0])
    m = view.matrix
    assert m is not None
    page = render_html(view)
    sections = re.findall(r'<section id="([^"]+)">', page)
    assert sections[0] == "answer"
    answer = page.split('<section id="answer">', 1)[1].split("</section>", 1)[0]
    # nDCG@10 has one row with no detectable difference (RM3), RR and R@100 four each.
    folded = re.findall(r'<details class="folded"><summary>(.*?)</summary>', answer)
    assert [html.unescape(s) for s in folded] == [
        "nDCG@10: no detectable difference for 1 row(s): RM3",
        "RR: no detectable difference for 4 row(s): RM3, TAS-B, ada2, SPLADE++",
        "R@100: no detectable difference for 4 row(s): RM3, TAS-B, ada2, SPLADE++"]
    assert answer.count(m.levels.replace("'", "&#x27;")) == 1  # the level, once per table
    assert "%</td>" not in answer  # and on no row
    detailed = render_html(view, detail=True)
    answer = detailed.split('<section id="answer">', 1)[1].split("</section>", 1)[0]
    assert 'class="folded"' not in answer
    assert answer.count("no detectable difference</span>") == 9


def test_an_eval_report_gets_the_table_of_its_stages() -> None:
    view = view_of(FIXTURES / "eval.json")
    m = view.matrix
    assert m is not None
    doc = json.loads((FIXTURES / "eval.json").read_text(encoding="utf-8"))
    assert [r.system for r in m.rows] == [s["name"] for s in doc["stages"]]
    for row, stage in zip(m.rows, doc["stages"], strict=True):
        assert [c.value for c in row.cells] == [stage["means"][k] for k in doc["measures"]]
    assert re.findall(r'<section id="([^"]+)">', render_html(view))[0] == "answer"


def test_eval_verdicts_fold_the_rows_with_no_detectable_difference() -> None:
    from rankproof.report.compare import verdicts_table

    m = matrix_of(FIXTURES / "eval.json")
    shown = sum(len(g.shown) for g in m.verdicts)
    folded = [g for g in m.verdicts if g.folded]
    assert shown and folded
    table, footer = verdicts_table(m)
    assert table.row_count == shown + len(folded)  # one line per measure for the n.s. rows
    # First the rule the verdicts were decided by, then what the folded lines mean.
    assert footer[0].startswith("Verdicts decided by: randomization test, Holm over")
    assert "--detail lists each" in footer[-1]
    table, footer = verdicts_table(m, detail=True)
    assert table.row_count == sum(len(g.shown) + len(g.folded) for g in m.verdicts)
    assert footer[0].startswith("Verdicts decided by:")
    assert all("--detail lists each" not in f for f in footer)
    assert len(footer) == 1 or "queries needed for 80% power" in footer[1]
    # The level is said once, in the lines under the matrix, and in no row or column.
    assert "level" not in [str(c.header) for c in table.columns]


@needs_pdflatex
def test_hostile_names_in_the_wide_table_compile(tmp_path: Path) -> None:
    import dataclasses

    from tests.report.test_latex import HOSTILE

    view = view_of(FIXTURES / "cmp.json")
    assert view.matrix is not None
    rows = tuple(dataclasses.replace(r, system=HOSTILE + r.system[:4]) for r in view.matrix.rows)
    matrix = dataclasses.replace(view.matrix, rows=rows, title=HOSTILE,
                                 footnotes=(*view.matrix.footnotes, HOSTILE),
                                 caveats=(HOSTILE,))
    fragment = render_latex(dataclasses.replace(view, matrix=matrix))
    body = fragment.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    for line in body.splitlines():
        if line.endswith(r"\\"):
            assert line.startswith(tex_text(HOSTILE))
    assert "\x1b" not in fragment and "中" not in fragment
    compile_fragment(fragment, tmp_path)


def test_a_level_shared_by_every_row_is_said_once_in_the_full_verdict_table() -> None:
    import dataclasses

    view = view_of(FIXTURES / "cmp.json")
    head = re.compile(r'<table id="verdict-table"><thead><tr>(.*?)</tr></thead>')
    levels = {v.ci_level for v in view.verdicts}
    page = render_html(view)
    assert len(levels) > 1 and "<th class=num>level</th>" in head.findall(page)[0]
    same = dataclasses.replace(view, verdicts=tuple(dataclasses.replace(v, ci_level=0.95)
                                                    for v in view.verdicts))
    page = render_html(same)
    assert "level" not in head.findall(page)[0]
    assert "each at the 95% level" in page and "each at its row&#x27;s level" not in page
