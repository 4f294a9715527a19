"""Gate a search service you reach over HTTP: evaluate, compare with significance, gate.

Runs offline in a few seconds:

1. starts the example search service (``service.py``) on 127.0.0.1;
2. evaluates three configurations of it through `rankproof.targets.HttpTarget`
   against the hand-written golden set ``goldens.jsonl``;
3. prints the candidate against the baseline, case-paired, with confidence
   intervals and Holm-corrected p-values;
4. saves the baseline and gates the candidate with ``checks.yaml`` (it
   passes: it is better, not worse);
5. ships the candidate as the new baseline and gates the "titles only"
   configuration, a real regression (it fails, and says why).

Exit code 0 when both gates decide as expected, 1 otherwise.
``--out DIR`` also writes each gate's JUnit XML and Markdown summary there.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from rankproof.gate import GateVerdict, load_baseline, load_checks, run_gate, save_baseline
from rankproof.measures import lookup
from rankproof.report.gate import verdict_lines, verdict_markdown, verdict_table
from rankproof.report.junit import verdict_junit
from rankproof.stats import correct, paired_test
from rankproof.targets import Case, HttpTarget, RunResult, load_goldens, run

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from service import serve  # noqa: E402  (beside this script, not an installed module)

CONFIGS = ("baseline", "candidate", "titles_only")
console = Console(highlight=False, width=140)


def evaluate(url: str, config: str, cases: tuple[Case, ...], metrics: list[str]) -> RunResult:
    """One configuration over every golden case, through the service's HTTP API."""
    with HttpTarget(f"{url}/{config}/search", config, timeout=5.0, max_concurrency=4) as t:
        return run(config, t, cases, metrics)


def comparison(candidate: RunResult, baseline: RunResult) -> Table:
    """Every per-case retrieval metric: means, Δ with 95% CI, p (randomization) and Holm."""
    metrics = [m for m in candidate.metrics if lookup(m).kind == "retrieval"]
    tests = [paired_test(candidate.scores(m), baseline.scores(m), seed=0) for m in metrics]
    adjusted = correct([t.p_value for t in tests], "holm")
    table = Table(title=f"{candidate.name} vs {baseline.name}: {tests[0].n} golden queries, "
                        "paired randomization test, 95% bootstrap CI, Holm-corrected",
                  title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("metric", baseline.name, candidate.name, "Δ [95% CI]", "p", "p (Holm)",
                "W/T/L"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for m, t, q in zip(metrics, tests, adjusted, strict=True):
        table.add_row(m, f"{t.mean_b:.4f}", f"{t.mean_a:.4f}",
                      f"{t.difference:+.4f} [{t.ci_low:+.4f}, {t.ci_high:+.4f}]",
                      f"{t.p_value:.4f}", f"{q:.4f}", f"{t.wins}/{t.ties}/{t.losses}")
    return table


def show(verdict: GateVerdict, out: Path | None, stem: str) -> None:
    console.print(verdict_table(verdict))
    for line in verdict_lines(verdict):
        console.print(line, markup=False)
    console.print()
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{stem}.xml").write_text(verdict_junit(verdict), encoding="utf-8")
        (out / f"{stem}.md").write_text(verdict_markdown(verdict), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write JUnit XML and Markdown here")
    args = parser.parse_args(argv)

    cases = load_goldens(HERE / "goldens.jsonl")
    checks = load_checks(HERE / "checks.yaml", known_case_ids=[c.id for c in cases])
    # Evaluate exactly what the checks need, so a saved run is comparable later.
    metrics = list(dict.fromkeys(c.metric for c in checks.checks))

    with serve() as url:
        console.print(f"search service on {url}; {len(cases)} golden queries")
        results = {name: evaluate(url, name, cases, metrics) for name in CONFIGS}

    console.print(comparison(results["candidate"], results["baseline"]))
    console.print()

    with tempfile.TemporaryDirectory(prefix="rankproof-example-") as store:
        save_baseline(results["baseline"], "main", store)
        console.print("[bold]1. gate the candidate against baseline 'main'[/]")
        candidate = run_gate(checks, results["candidate"], load_baseline("main", store))
        show(candidate, args.out, "candidate")

        save_baseline(results["candidate"], "main", store, overwrite=True)
        console.print("[bold]2. the candidate shipped; gate 'titles_only' against it[/]")
        titles_only = run_gate(checks, results["titles_only"], load_baseline("main", store))
        show(titles_only, args.out, "titles_only")

    expected = candidate.passed and not titles_only.passed
    console.print(f"candidate gate: {'PASSED' if candidate.passed else 'FAILED'}; "
                  f"titles_only gate: {'PASSED' if titles_only.passed else 'FAILED'} — "
                  + ("as expected" if expected else "NOT as expected"), markup=False)
    return 0 if expected else 1


if __name__ == "__main__":
    sys.exit(main())
