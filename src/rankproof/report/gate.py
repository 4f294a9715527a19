"""A gate verdict for people: a Rich table for the terminal and a Markdown summary for CI.

Both show, per check, the number it was decided on: for a threshold check
the value against the threshold; for a baseline check the difference with
its confidence interval and p-value, because "nDCG fell by 0.01" means
nothing without knowing whether 0.01 is noise on this golden set.
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from rankproof.gate import CheckResult, GateVerdict
from rankproof.report.compare import p_text
from rankproof.report.console import escape_controls

_STYLE = {"PASS": "bold green", "FAIL": "bold red", "WARN": "bold yellow"}
_ICON = {"PASS": "✅", "FAIL": "❌", "WARN": "⚠️"}
_OPS = {"<=": "≤", ">=": "≥", "==": "="}
_NO_WRAP = frozenset({"check", "value", "baseline", "level", "coverage", "verdict"})


def _num(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.4f}" if abs(x) < 1e5 else f"{x:.4g}"


def cells(c: CheckResult) -> dict[str, str]:
    """The displayed fields of one check (shared by the table and the Markdown)."""
    base = _num(c.baseline_value) if c.kind == "vs_baseline" else "—"
    if c.kind == "vs_baseline":
        value = _num(c.value)
        delta = (f"{c.difference:+.4f} {c.comparison.interval_text()} "
                 f"({c.comparison.ci_level * 100:.4g}%)"
                 if c.difference is not None and c.comparison is not None else "—")
        p = p_text(c.p_value)
        if c.correction not in (None, "none") and c.p_corrected is not None:
            p += f" ({c.correction} {p_text(c.p_corrected)})"
        rule = (f"no regression, α {c.alpha:g}" if c.margin is None
                else f"no regression beyond {c.margin:g}, α {c.alpha:g}")
    else:
        value, delta, p = _num(c.value), "—", "—"
        rule = f"{_OPS.get(c.op or '', c.op)} {c.threshold:g}"
    return {"check": c.id, "metric": c.metric, "value": value, "baseline": base,
            "delta": delta, "p": p,
            "rule": rule, "level": c.level, "coverage": c.coverage, "outcome": c.outcome}


def _title(v: GateVerdict) -> str:
    n_fail, n_warn = len(v.failures), len(v.warnings)
    state = "PASSED" if v.passed else "FAILED"
    detail = [f"{len(v.checks)} check{'s' if len(v.checks) != 1 else ''}"]
    if n_fail:
        detail.append(f"{n_fail} blocking failure{'s' if n_fail != 1 else ''}")
    if n_warn:
        detail.append(f"{n_warn} warning{'s' if n_warn != 1 else ''}")
    return f"gate {state}: {', '.join(detail)}"


def _subtitle(v: GateVerdict) -> str:
    parts = [f"run {v.run!r}"]
    if v.baseline is not None:
        parts.append(f"baseline {v.baseline!r}")
        tests = ", ".join(dict.fromkeys(c.test for c in v.checks if c.test)) or "no"
        family = sum(c.kind == "vs_baseline" for c in v.checks)
        alphas = ", ".join(dict.fromkeys(f"α={c.alpha:g}" for c in v.checks
                                         if c.alpha is not None))
        parts.append(f"{tests} test, {v.resamples} resamples, seed {v.seed}, "
                     f"{v.correction} correction over {family} baseline "
                     f"check{'s' if family != 1 else ''}"
                     + (f", {alphas}" if alphas else "")
                     + "; intervals: the test inverted at each check's corrected level "
                       "(one-sided for no_regression_beyond)")
    if v.source:
        parts.append(f"checks {v.source}")
    return "; ".join(parts)


def verdict_table(v: GateVerdict) -> Table:
    """One row per check: value or Δ with CI and p, the rule, level, coverage, outcome."""
    table = Table(title=f"{_title(v)}\n{_subtitle(v)}", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for name, justify in (("check", "left"), ("metric", "left"), ("value", "right"),
                          ("baseline", "right"), ("Δ [interval] (level)", "right"), ("p", "right"),
                          ("rule", "left"),
                          ("level", "left"), ("coverage", "right"), ("verdict", "left")):
        table.add_column(name, justify=justify,  # type: ignore[arg-type]
                         no_wrap=name in _NO_WRAP, overflow="fold")
    for c in v.checks:
        f = cells(c)
        table.add_row(f["check"], f["metric"], f["value"], f["baseline"], f["delta"], f["p"],
                      f["rule"], f["level"], f["coverage"],
                      Text(f["outcome"], style=_STYLE[c.outcome]))
    return table


def verdict_lines(v: GateVerdict) -> list[str]:
    """Plain lines under the table: each failed or warned check's message, then notes."""
    lines = [f"{c.outcome} {c.id}: {c.message}" for c in v.checks if not c.passed]
    lines += [f"note: {n}" for n in v.notes]
    return lines


def _md(text: str) -> str:
    """``text`` for one Markdown table cell or line: a newline becomes a space, other
    control characters their escapes (no terminal escape reaches a reader), ``|`` escaped."""
    return escape_controls(text.replace("\n", " ")).replace("|", "\\|")


def verdict_markdown(v: GateVerdict) -> str:
    """A GitHub-flavoured Markdown summary (suitable for ``$GITHUB_STEP_SUMMARY``)."""
    icon = "✅" if v.passed else "❌"
    out = [f"### {icon} rankproof {_title(v)}", "", _md(_subtitle(v)), "",
           "| | check | metric | value | baseline | Δ [interval] (level) | p | rule | level "
           "| coverage |",
           "|---|---|---|---:|---:|---:|---:|---|---|---:|"]
    for c in v.checks:
        f = cells(c)
        out.append("| " + " | ".join([
            f"{_ICON[c.outcome]} {c.outcome}", f"`{_md(f['check'])}`", _md(f["metric"]),
            _md(f["value"]), _md(f["baseline"]), _md(f["delta"]), _md(f["p"]), _md(f["rule"]),
            f["level"], f["coverage"]]) + " |")
    failed = [c for c in v.checks if not c.passed]
    if failed:
        out += ["", "**Failed checks**", ""]
        out += [f"- {_ICON[c.outcome]} `{_md(c.id)}` ({c.level}): {_md(c.message)}"
                for c in failed]
    if v.notes:
        out += ["", "**Notes**", ""]
        out += [f"- {_md(n)}" for n in v.notes]
    return "\n".join(out) + "\n"
