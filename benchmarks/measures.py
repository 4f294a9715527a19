"""End-to-end and compute-only timings of rankproof against its Python peers.

Usage::

    .venv/bin/python benchmarks/measures.py            # MS MARCO scale, 6,980 x 1,000
    .venv/bin/python benchmarks/measures.py --topics 500 --repeat 1   # a quick look
    .venv/bin/python benchmarks/measures.py --shape both --repeat 1   # MS MARCO, then 1M x 10

``--shape million`` times the query-log shape (1,000,000 topics x 10 documents, one
relevant each: ``gen_million.py``'s run A and qrels); ``--shape both`` runs both shapes
in one invocation, prints each table, then the targets side by side, and writes
``measures-results.json`` (MS MARCO) and ``measures-results-million.json``.

Each system runs in its own fresh process (so peak memory is per system) and
reports, as JSON: import time, load time (files -> the library's objects),
compute time (objects -> the four means; the best of ``--compute-repeat``
calls is the *compute-alone* figure), peak RSS, and the means themselves.
The parent checks that every system agrees with rankproof to 4 decimals
before printing any speed-up, and writes everything to
``<out-dir>/measures-results.json``.

Measures: nDCG@10, RR@10 (MRR@10), R@1000 (recall@1000), AP (map).
pytrec_eval has no RR cutoff, so its row reports ``recip_rank`` (RR without
cutoff); rankproof's RR is computed (untimed) to check it.

The ``rankproof-cli`` row times the command line as a user runs it: one
``rankproof measure QRELS RUN -m ... --format csv`` process, from its start to
its exit with the means printed (interpreter start, imports, reading,
evaluation, printing: the whole process, wall and CPU from ``wait4``). Its
target (issue 23) is ≥ 5x faster than pytrec_eval's parse + evaluate on wall *and*
CPU time (imports excluded for pytrec_eval), at both shapes. ``--start-only`` times
``rankproof --version`` and
``rankproof --help`` (best of 5 processes each) and nothing else; a full run
prints those figures too.

The ``pyarrow`` row is not an evaluator: it times ``pyarrow.csv.read_csv`` of the
run alone (every column, multi-threaded), the floor an Arrow-based loader stands
on; the target is the whole ``rankproof measure`` process within 1.5x of that read
(imports excluded for pyarrow), and >= 5x faster than the fastest peer's parse +
evaluate. Every system's peak memory is also shown above its post-import
baseline: the peak of a process that only imports what the system needs.

``--all-trec`` times ``-m all_trec`` (97 measures) instead: rankproof's
library (``evaluate(qrels, run, "all_trec")`` and trec_eval's ``all`` value of
each), the whole ``rankproof measure -m all_trec --format csv`` process, and
pytrec_eval's every measure (``RelevanceEvaluator(qrels,
pytrec_eval.supported_measures)`` and the same ``all`` values), side by side;
results go to ``<out-dir>/measures-all-trec-results.json``. pytrec_eval is
trec_eval 9.0.x, whose iprec_at_recall and 11pt_avg round recall levels to
ranks differently from trec_eval 10: their means over all topics are shown,
not compared; each system also reports them over the topics where both rules
pick the same rank (``[same-rank topics]``), and those are compared.
"""

from __future__ import annotations

# Run as a script, this folder is sys.path[0], where a module named like a
# standard one (benchmarks/collections.py) would shadow the standard library
# for every later import. Search this folder last instead (``os`` and ``sys``
# are loaded at start-up, before any shadowing can happen).
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _HERE:
    sys.path.append(sys.path.pop(0))

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from _common import (  # noqa: E402
    MSMARCO_DOCS,
    SyntheticPaths,
    peak_rss_mib,
    run_child,
    start_launcher,
    synthetic_paths,
    timed_child,
    write_synthetic,
)

SYSTEMS = ("rankproof", "ranx", "pytrec_eval", "ir_measures", "pyarrow")
PEERS = ("ranx", "pytrec_eval", "ir_measures")
"""The evaluators rankproof is compared with; ``pyarrow`` is not one: it only reads the
run (``pyarrow.csv.read_csv``, every column, its defaults but the delimiter), the floor
any Arrow-based loader stands on."""
CLI = "rankproof-cli"
CHOICES = (*SYSTEMS, CLI)
MEASURES = ("nDCG@10", "RR@10", "R@1000", "AP")
TOLERANCE = 5e-5  # "agree to 4 decimals"

TARGETS = {
    "end_to_end_vs_fastest_peer": 3.0,
    "compute_vs_ranx_after_warmup": 3.0,
    "cli_whole_process_vs_pytrec_eval": 5.0,
    "all_trec_vs_pytrec_eval": 3.0,
    "cli_start_max_s": 0.3,
    "cli_vs_pyarrow_read_max": 1.5,
    "cli_vs_fastest_peer": 5.0,
}

BASELINE_IMPORTS = {
    "rankproof": "from rankproof import read_trec_qrels, read_trec_run, evaluate",
    "rankproof-cli": "import rankproof.cli, rankproof.cli.measure, rankproof.cli._runs",
    "ranx": "import ranx",
    "pytrec_eval": "import pytrec_eval",
    "ir_measures": "import ir_measures",
    "pyarrow": "import pyarrow.csv",
}
"""What each system's process has imported before it reads anything: its peak RSS is the
post-import baseline that ``peak above baseline`` subtracts."""


# -- child processes: one system each -------------------------------------------

class _Clock:
    """Wall and CPU seconds (CPU: all threads of this process) since creation.

    CPU time is the steadier figure on a shared machine: other processes
    stretch wall time but not the work done.
    """

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def _best(calls: int, fn: Any) -> tuple[float, float, float, Any]:
    """Call ``fn`` ``calls`` times: (first wall s, first CPU s, best wall s, first result)."""
    times: list[float] = []
    first_cpu = 0.0
    first: Any = None
    for i in range(calls):
        clock = _Clock()
        out = fn()
        wall, cpu = clock.read()
        times.append(wall)
        if i == 0:
            first, first_cpu = out, cpu
    return times[0], first_cpu, min(times), first


def child_rankproof(run_path: str, qrels_path: str, calls: int) -> dict[str, Any]:
    qrels, run, timed = _rankproof_inputs(run_path, qrels_path)  # times the import first
    from rankproof import evaluate
    compute_s, compute_cpu_s, best_s, means = _best(
        calls, lambda: evaluate(qrels, run, MEASURES).mean())
    # Untimed: RR without cutoff, to check pytrec_eval's recip_rank.
    extra = evaluate(qrels, run, ["RR"]).mean()
    return {**timed, "compute_s": compute_s, "compute_cpu_s": compute_cpu_s,
            "compute_best_s": best_s, "means": {**means, "RR": extra["RR"]}}


def _rankproof_inputs(run_path: str, qrels_path: str) -> tuple[Any, Any, dict[str, float]]:
    """rankproof's qrels and run, with the import and the load timed apart."""
    t = time.perf_counter()
    # rankproof's top-level names are imported on first use: take them here,
    # so that the import is timed as import, not as load.
    from rankproof import read_trec_qrels, read_trec_run
    import_s = time.perf_counter() - t

    clock = _Clock()
    qrels = read_trec_qrels(qrels_path)
    run = read_trec_run(run_path)
    load_s, load_cpu_s = clock.read()
    return qrels, run, {"import_s": import_s, "load_s": load_s, "load_cpu_s": load_cpu_s}


def _pytrec_inputs(run_path: str, qrels_path: str) -> tuple[Any, Any, dict[str, float]]:
    """pytrec_eval's qrels and run (its own parsers), with the import and the load timed."""
    t = time.perf_counter()
    import pytrec_eval
    import_s = time.perf_counter() - t

    clock = _Clock()
    with open(qrels_path) as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    with open(run_path) as fh:
        run = pytrec_eval.parse_run(fh)
    load_s, load_cpu_s = clock.read()
    return qrels, run, {"import_s": import_s, "load_s": load_s, "load_cpu_s": load_cpu_s}


RANX_METRICS = {"nDCG@10": "ndcg@10", "RR@10": "mrr@10", "R@1000": "recall@1000", "AP": "map"}


def child_ranx(run_path: str, qrels_path: str, calls: int) -> dict[str, Any]:
    t = time.perf_counter()
    import ranx
    import_s = time.perf_counter() - t
    metrics = list(RANX_METRICS.values())

    # Numba JIT warm-up: the same steps on the first 12 topics of the same
    # files. Same files, because numba compiles per docid array dtype (``<U7``
    # for MS MARCO ids), so a toy input would leave compilation in the timed
    # load. At least 10 topics: ranx drops to one thread for fewer, and that
    # setting would persist into the timed call.
    warm_run, warm_qrels = _prefix_files(run_path, qrels_path, topics=12)
    t = time.perf_counter()
    ranx.evaluate(ranx.Qrels.from_file(warm_qrels, kind="trec"),
                  ranx.Run.from_file(warm_run, kind="trec"), metrics)
    warmup_s = time.perf_counter() - t

    clock = _Clock()
    qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
    run = ranx.Run.from_file(run_path, kind="trec")
    load_s, load_cpu_s = clock.read()
    compute_s, compute_cpu_s, best_s, raw = _best(
        calls, lambda: ranx.evaluate(qrels, run, metrics))
    means = {ours: float(raw[theirs]) for ours, theirs in RANX_METRICS.items()}
    return {"import_s": import_s, "warmup_s": warmup_s, "load_s": load_s,
            "load_cpu_s": load_cpu_s, "compute_s": compute_s, "compute_cpu_s": compute_cpu_s,
            "compute_best_s": best_s, "means": means}


def _prefix_files(run_path: str, qrels_path: str, topics: int) -> tuple[str, str]:
    """The first ``topics`` topics of a run and their qrels, as temporary files."""
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="rankproof-bench-"))
    seen: list[str] = []
    with open(run_path) as src, open(out / "run.trec", "w") as dst:
        for line in src:
            qid = line.split(maxsplit=1)[0]
            if qid not in seen:
                if len(seen) == topics:
                    break
                seen.append(qid)
            dst.write(line)
    wanted = set(seen)
    with open(qrels_path) as src, open(out / "qrels.txt", "w") as dst:
        dst.writelines(line for line in src if line.split(maxsplit=1)[0] in wanted)
    return str(out / "run.trec"), str(out / "qrels.txt")


PYTREC_MEASURES = {"nDCG@10": "ndcg_cut_10", "RR": "recip_rank", "R@1000": "recall_1000",
                   "AP": "map"}


def child_pytrec_eval(run_path: str, qrels_path: str, calls: int) -> dict[str, Any]:
    qrels, run, timed = _pytrec_inputs(run_path, qrels_path)  # times the import first
    import pytrec_eval

    def compute() -> dict[str, float]:
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels, {"ndcg_cut.10", "recip_rank", "recall.1000", "map"})
        per_query = evaluator.evaluate(run)
        # trec_eval -c: every qrels topic counts, a topic the run lacks scores 0.
        n = len(qrels)
        return {ours: sum(v[theirs] for v in per_query.values()) / n
                for ours, theirs in PYTREC_MEASURES.items()}

    compute_s, compute_cpu_s, best_s, means = _best(calls, compute)
    return {**timed, "compute_s": compute_s, "compute_cpu_s": compute_cpu_s,
            "compute_best_s": best_s, "means": means,
            "notes": ["recip_rank has no cutoff: RR@10 not available; RR checked instead"]}


def child_ir_measures(run_path: str, qrels_path: str, calls: int) -> dict[str, Any]:
    t = time.perf_counter()
    import ir_measures
    from ir_measures import AP, RR, R, nDCG
    import_s = time.perf_counter() - t
    wanted = {"nDCG@10": nDCG @ 10, "RR@10": RR @ 10, "R@1000": R @ 1000, "AP": AP}

    # ir_measures reads files lazily inside calc_aggregate: load and compute
    # are one step, reported as compute.
    clock = _Clock()
    agg = ir_measures.calc_aggregate(list(wanted.values()),
                                     ir_measures.read_trec_qrels(qrels_path),
                                     ir_measures.read_trec_run(run_path))
    total_s, total_cpu_s = clock.read()
    means = {ours: float(agg[m]) for ours, m in wanted.items()}
    return {"import_s": import_s, "load_s": None, "load_cpu_s": None, "compute_s": total_s,
            "compute_cpu_s": total_cpu_s, "compute_best_s": None, "means": means,
            "notes": ["reads the files lazily inside calc_aggregate: no separate load time"]}


# -- -m all_trec against pytrec_eval's every measure (--all-trec) -------------------

ALL_TREC_SYSTEMS = ("rankproof", "pytrec_eval", CLI)
COUNT_NAMES = frozenset({"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})
GEOMETRIC_NAMES = frozenset({"gm_map", "gm_bpref"})
NOT_MEASURES = frozenset({"runid", "num_q", "relstring"})
IPREC_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
ROUNDING_CHANGED = {**{f"iprec_at_recall_{x:.2f}": (x,) for x in IPREC_LEVELS},
                    "11pt_avg": IPREC_LEVELS}
"""trec_eval 10 turns a recall level x into lround(x R) relevant documents; pytrec_eval's
9.0.x into (long)(x R + 0.9). Their means over all topics differ by that rule alone."""
SAME_RANK = " [same-rank topics]"


def _same_rank(num_rel: float, levels: tuple[float, ...]) -> bool:
    """Whether trec_eval 9.0.x and 10 pick the same rank for every level (0 counts as 1)."""
    import math

    return all(max(math.floor(x * num_rel + 0.9), 1) == max(math.floor(x * num_rel + 0.5), 1)
               for x in levels)


def _same_rank_means(num_rel: list[float], columns: dict[str, list[float]]) -> dict[str, float]:
    """Means of the rounding-changed measures over the topics where both rules agree."""
    out = {}
    for name, levels in ROUNDING_CHANGED.items():
        keep = [v for r, v in zip(num_rel, columns[name], strict=True) if _same_rank(r, levels)]
        out[name + SAME_RANK] = sum(keep) / len(keep) if keep else float("nan")
    return out


def child_rankproof_all_trec(run_path: str, qrels_path: str, calls: int) -> dict[str, Any]:
    qrels, run, timed = _rankproof_inputs(run_path, qrels_path)  # times the import first
    from rankproof import evaluate

    def compute() -> tuple[Any, dict[str, float]]:
        # trec_eval's "all" values: sums for counts, geometric means for gm_*.
        pq = evaluate(qrels, run, "all_trec")
        return pq, {m.trec_name: pq.aggregate(m) for m in pq.measures}

    compute_s, compute_cpu_s, best_s, (pq, means) = _best(calls, compute)
    by_name = {m.trec_name: m for m in pq.measures}
    means.update(_same_rank_means(pq.column(by_name["num_rel"]).tolist(),
                                  {n: pq.column(by_name[n]).tolist() for n in ROUNDING_CHANGED}))
    return {**timed, "compute_s": compute_s, "compute_cpu_s": compute_cpu_s,
            "compute_best_s": best_s, "means": means, "n_measures": len(pq.measures),
            "notes": [f"evaluate(qrels, run, 'all_trec'): {len(pq.measures)} measures"]}


def _pytrec_all_means(per_query: dict[str, dict[str, Any]], n: int) -> dict[str, float]:
    """trec_eval's "all" line from pytrec_eval's per-topic values (``-c``: n qrels topics)."""
    import math

    names = [k for k in next(iter(per_query.values())) if k not in NOT_MEASURES]
    missing = n - len(per_query)
    out = {}
    for name in names:
        values = [v[name] for v in per_query.values()]
        if name == "set_F":  # 0/0 is NaN here; trec_eval 10 prints 0
            values = [0.0 if math.isnan(x) else x for x in values]
        if name in COUNT_NAMES:
            out[name] = float(sum(values))
        elif name in GEOMETRIC_NAMES:  # pytrec_eval reports log(max(x, 0.00001))
            out[name] = math.exp((sum(values) + missing * math.log(0.00001)) / n)
        else:
            out[name] = sum(values) / n
    return out


def child_pytrec_eval_all_trec(run_path: str, qrels_path: str, calls: int) -> dict[str, Any]:
    qrels, run, timed = _pytrec_inputs(run_path, qrels_path)  # times the import first
    import pytrec_eval

    def compute() -> tuple[dict[str, dict[str, Any]], dict[str, float]]:
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures)
        per_query = evaluator.evaluate(run)
        return per_query, _pytrec_all_means(per_query, len(qrels))

    compute_s, compute_cpu_s, best_s, (per_query, means) = _best(calls, compute)
    rows = list(per_query.values())
    means.update(_same_rank_means([r["num_rel"] for r in rows],
                                  {n: [r[n] for r in rows] for n in ROUNDING_CHANGED}))
    n_measures = len([k for k in rows[0] if k not in NOT_MEASURES])
    return {**timed, "compute_s": compute_s, "compute_cpu_s": compute_cpu_s,
            "compute_best_s": best_s, "means": means, "n_measures": n_measures,
            "notes": [f"RelevanceEvaluator(qrels, supported_measures): {n_measures} per-topic "
                      "values (and runid, num_q, relstring); trec_eval 9.0.x"]}


def child_pyarrow(run_path: str, qrels_path: str, calls: int) -> dict[str, Any]:
    """pyarrow's own read of the run file: the whole table, multi-threaded, nothing else."""
    t = time.perf_counter()
    import pyarrow.csv as pa_csv
    import_s = time.perf_counter() - t
    clock = _Clock()
    table = pa_csv.read_csv(
        run_path, read_options=pa_csv.ReadOptions(autogenerate_column_names=True),
        parse_options=pa_csv.ParseOptions(delimiter=" "))
    load_s, load_cpu_s = clock.read()
    return {"import_s": import_s, "load_s": load_s, "load_cpu_s": load_cpu_s, "compute_s": 0.0,
            "compute_cpu_s": 0.0, "compute_best_s": None, "means": {},
            "notes": [f"pyarrow.csv.read_csv of the run alone ({table.num_rows:,} rows, "
                      f"{table.num_columns} columns); no qrels, no evaluation"]}


CHILDREN = {"rankproof": child_rankproof, "ranx": child_ranx, "pyarrow": child_pyarrow,
            "pytrec_eval": child_pytrec_eval, "ir_measures": child_ir_measures}
CHILDREN_ALL_TREC = {"rankproof": child_rankproof_all_trec,
                     "pytrec_eval": child_pytrec_eval_all_trec}


def child_main(system: str, run_path: str, qrels_path: str, calls: int,
               all_trec: bool = False) -> None:
    out = (CHILDREN_ALL_TREC if all_trec else CHILDREN)[system](run_path, qrels_path, calls)
    out["system"] = system
    out["total_s"] = (out["load_s"] or 0.0) + out["compute_s"]
    out["total_cpu_s"] = (out["load_cpu_s"] or 0.0) + out["compute_cpu_s"]
    out["with_import_s"] = out["import_s"] + out["total_s"]
    out["peak_mib"] = peak_rss_mib()
    print(json.dumps(out))


# -- the command line, timed as a whole process -------------------------------------

def _timed_process(argv: list[str]) -> tuple[float, float, float, str]:
    """Run ``argv``: (wall s, CPU s, peak MiB, stdout), from that child's own ``wait4``
    rusage, spawned by the small launcher (`_common.Launcher`) so that the figure is the
    child's peak and not this parent's."""
    out, err, usage = timed_child(argv)
    if usage["returncode"] != 0:
        raise RuntimeError(f"{argv} failed ({usage['returncode']}):\n"
                           f"{err.decode('utf-8', 'replace')[-4000:]}")
    return (float(usage["wall_s"]), float(usage["cpu_s"]), float(usage["peak_mib"]),
            out.decode("utf-8"))


def baseline_mib(system: str) -> float:
    """Peak RSS of a process that only imports what ``system`` needs (best of 3)."""
    code = (f"{BASELINE_IMPORTS[system]}\nimport resource\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    return min(_timed_process([sys.executable, "-c", code])[2] for _ in range(3))


def _cli() -> list[str]:
    return [sys.executable, "-m", "rankproof"]


def run_cli(run_path: str, qrels_path: str) -> dict[str, Any]:
    """``rankproof measure`` from process start to printed means (one process)."""
    argv = [*_cli(), "measure", qrels_path, run_path, "--format", "csv"]
    for m in MEASURES:
        argv += ["-m", m]
    wall, cpu, peak, text = _timed_process(argv)
    means = {row.split(",")[2]: float(row.split(",")[3]) for row in text.splitlines()[1:]}
    return {"system": CLI, "import_s": None, "load_s": None, "load_cpu_s": None,
            "compute_s": wall, "compute_cpu_s": cpu, "compute_best_s": None,
            "total_s": wall, "total_cpu_s": cpu, "with_import_s": wall, "peak_mib": peak,
            "means": means,
            "notes": ["whole process: interpreter start, imports, read, evaluate, print "
                      "(shown as total; import and load are inside it)"]}


def run_cli_all_trec(run_path: str, qrels_path: str) -> dict[str, Any]:
    """``rankproof measure -m all_trec`` as one process; means keyed by trec_eval name."""
    import csv

    from rankproof.measures import parse

    argv = [*_cli(), "measure", qrels_path, run_path, "-m", "all_trec", "--format", "csv"]
    wall, cpu, peak, text = _timed_process(argv)
    means = {parse(row["measure"]).trec_name: float(row["value"])
             for row in csv.DictReader(text.splitlines())}
    return {"system": CLI, "import_s": None, "load_s": None, "load_cpu_s": None,
            "compute_s": wall, "compute_cpu_s": cpu, "compute_best_s": None,
            "total_s": wall, "total_cpu_s": cpu, "with_import_s": wall, "peak_mib": peak,
            "means": means, "n_measures": len(means),
            "notes": [f"whole process: rankproof measure -m all_trec --format csv "
                      f"({len(means)} measures printed)"]}


def cli_start(repeat: int = 5) -> dict[str, float]:
    """Best-of-``repeat`` wall seconds of ``rankproof --version`` and ``rankproof --help``."""
    out = {}
    for flag in ("--version", "--help"):
        out[flag] = min(_timed_process([*_cli(), flag])[0] for _ in range(repeat))
    return out


# -- parent: orchestrate, check, report ------------------------------------------

def _ratio(theirs: float | None, ours: float | None) -> float | None:
    if theirs is None or ours is None or ours <= 0:
        return None
    return theirs / ours


def _fmt(value: float | None, spec: str = ".2f", suffix: str = "") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


def aggregate(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Best repeat by total time; compute-alone is the best compute seen in any repeat."""
    best = dict(min(samples, key=lambda s: s["total_s"]))
    computes = [s["compute_best_s"] for s in samples if s.get("compute_best_s") is not None]
    best["compute_alone_s"] = min(computes) if computes else None
    best["peak_mib"] = max(s["peak_mib"] for s in samples)
    best["repeats"] = len(samples)
    best["all_totals_s"] = [s["total_s"] for s in samples]
    return best


def check_agreement(results: dict[str, dict[str, Any]],
                    skip: dict[str, frozenset[str]] | None = None) -> list[dict[str, Any]]:
    """Every mean two systems share, against rankproof's; ``skip``: system -> names not
    compared (a definition that differs by design)."""
    ours = results["rankproof"]["means"]
    rows = []
    for system, res in results.items():
        if system == "rankproof":
            continue
        for key, value in res["means"].items():
            if key not in ours or key in (skip or {}).get(system, ()):
                continue
            diff = abs(value - ours[key])
            rows.append({"system": system, "measure": key, "theirs": value,
                         "rankproof": ours[key], "abs_diff": diff,
                         "agree": diff <= TOLERANCE})
    return rows


def render(results: dict[str, dict[str, Any]], agreement: list[dict[str, Any]],
           info: dict[str, Any]) -> str:
    ours = results["rankproof"]
    head = (f"{'system':<12} {'import s':>8} {'warm-up s':>9} {'load s':>7} {'compute s':>9} "
            f"{'total s':>8} {'CPU s':>6} {'peak MiB':>9} {'total x':>8} {'CPU x':>6} "
            f"{'compute x':>9} {'mem x':>6}")
    which = "-m all_trec" if info.get("measure_set") == "all_trec" else "four measures"
    lines = [
        f"rankproof measures benchmark ({which}): "
        f"{info['topics']} topics x {info['depth']} docs "
        f"({info['run_lines']:,} run lines), seed {info['seed']}, best of {info['repeat']} "
        f"process(es); compute-alone = best of {info['compute_repeat']} calls",
        f"machine: {info['cpus']} CPUs, load average at start {info['load_start']}, "
        f"at end {info['load_end']}",
        head, "-" * len(head),
    ]
    for system, res in results.items():
        lines.append(
            f"{system:<12} {_fmt(res['import_s']):>8} {_fmt(res.get('warmup_s')):>9} "
            f"{_fmt(res['load_s']):>7} {_fmt(res['compute_s']):>9} {_fmt(res['total_s']):>8} "
            f"{_fmt(res['total_cpu_s']):>6} {_fmt(res['peak_mib'], '.0f'):>9} "
            f"{_fmt(_ratio(res['total_s'], ours['total_s']), '.1f', 'x'):>8} "
            f"{_fmt(_ratio(res['total_cpu_s'], ours['total_cpu_s']), '.1f', 'x'):>6} "
            f"{_fmt(_ratio(res['compute_alone_s'], ours['compute_alone_s']), '.1f', 'x'):>9} "
            f"{_fmt(_ratio(res['peak_mib'], ours['peak_mib']), '.1f', 'x'):>6}"
        )
    lines.append("")
    lines.append("peak memory above the post-import baseline (a process that only imports):")
    for system, res in results.items():
        if res.get("baseline_mib") is not None:
            lines.append(f"  {system:<13} {res['peak_above_baseline_mib']:7.0f} MiB "
                         f"(peak {res['peak_mib']:.0f} - baseline {res['baseline_mib']:.0f})")
    lines.append("")
    lines.append("compute alone (objects already loaded; ranx after JIT warm-up):")
    for system, res in results.items():
        if res["compute_alone_s"] is not None:
            r = _ratio(res["compute_alone_s"], ours["compute_alone_s"])
            lines.append(f"  {system:<12} {res['compute_alone_s']:.3f} s   "
                         f"{_fmt(r, '.1f', 'x')} rankproof's time")
    lines.append("")
    lines.append("x columns: their time (or memory) / rankproof's. total = load + compute, "
                 "wall clock; CPU = the same span in CPU seconds, all threads (steadier on a "
                 "shared machine). Imports and ranx's JIT warm-up are shown, not included.")
    bad = [a for a in agreement if not a["agree"]]
    checked = sorted({a["measure"] for a in agreement})
    if bad:
        for a in bad:
            lines.append(f"WARNING: {a['system']} {a['measure']} = {a['theirs']:.6f}, "
                         f"rankproof = {a['rankproof']:.6f} (diff {a['abs_diff']:.2e})")
    else:
        shown = ", ".join(checked) if len(checked) <= 12 else f"{len(checked)} means"
        lines.append(f"agreement: every system matches rankproof to 4 decimals on {shown}")
    means = list(ours["means"].items())
    more = f", … ({len(means)} in all: see the JSON)" if len(means) > 12 else ""
    lines.append("means: " + ", ".join(f"{k} {v:.4f}" for k, v in means[:12]) + more)
    start = info.get("cli_start")
    if start:
        lines.append(f"CLI start (best of {info['cli_start_repeat']} processes): "
                     + ", ".join(f"rankproof {flag} {s:.3f} s" for flag, s in start.items()))
    for system, res in results.items():
        for note in res.get("notes", []):
            lines.append(f"note ({system}): {note}")
    for name, verdict in info["targets"].items():
        lines.append(f"target {name}: {verdict}")
    return "\n".join(lines)


def targets(results: dict[str, dict[str, Any]]) -> dict[str, str]:
    ours = results["rankproof"]
    out: dict[str, str] = {}
    peers = {s: r for s, r in results.items() if s in PEERS}
    if peers:
        fastest = min(peers, key=lambda s: peers[s]["total_s"])
        r = peers[fastest]["total_s"] / ours["total_s"]
        cpu = peers[fastest]["total_cpu_s"] / ours["total_cpu_s"]
        goal = TARGETS["end_to_end_vs_fastest_peer"]
        with_import = peers[fastest]["with_import_s"] / ours["with_import_s"]
        out["end_to_end_vs_fastest_peer"] = (
            f"{'MET' if r >= goal else 'NOT MET'} ({r:.1f}x wall, {cpu:.1f}x CPU, "
            f"{with_import:.1f}x wall counting imports, vs {fastest}; goal {goal:.0f}x)")
        heavier = [s for s, p in peers.items() if p["peak_mib"] <= ours["peak_mib"]]
        out["peak_memory_below_every_peer"] = (
            "MET" if not heavier else f"NOT MET ({', '.join(heavier)} use no more)")
    if CLI in results and "pytrec_eval" in results:
        cli, peer = results[CLI], results["pytrec_eval"]
        r = peer["total_s"] / cli["total_s"]
        cpu = peer["total_cpu_s"] / cli["total_cpu_s"]
        goal = TARGETS["cli_whole_process_vs_pytrec_eval"]
        out["cli_whole_process_vs_pytrec_eval"] = (
            f"{'MET' if min(r, cpu) >= goal else 'NOT MET'} ({r:.1f}x wall, {cpu:.1f}x CPU: "
            f"rankproof measure {cli['total_s']:.2f} s as a whole process vs pytrec_eval "
            f"parse + evaluate {peer['total_s']:.2f} s; goal {goal:.0f}x on wall and CPU)")
    if CLI in results and "pyarrow" in results:
        cli, read = results[CLI]["total_s"], results["pyarrow"]["load_s"]
        cli_cpu, read_cpu = results[CLI]["total_cpu_s"], results["pyarrow"]["load_cpu_s"]
        r = cli / read
        goal = TARGETS["cli_vs_pyarrow_read_max"]
        out["cli_whole_process_vs_pyarrow_read"] = (
            f"{'MET' if r <= goal else 'NOT MET'} ({r:.2f}x wall, {cli_cpu / read_cpu:.2f}x "
            f"CPU: rankproof measure {cli:.2f} s as a whole process vs pyarrow's read_csv of "
            f"the run alone {read:.2f} s, imports excluded; goal <= {goal}x)")
    if CLI in results and peers:
        fastest = min(peers, key=lambda s: peers[s]["total_s"])
        r = peers[fastest]["total_s"] / results[CLI]["total_s"]
        goal = TARGETS["cli_vs_fastest_peer"]
        out["cli_whole_process_vs_fastest_peer"] = (
            f"{'MET' if r >= goal else 'NOT MET'} ({r:.1f}x: rankproof measure "
            f"{results[CLI]['total_s']:.2f} s as a whole process vs {fastest} parse + "
            f"evaluate {peers[fastest]['total_s']:.2f} s, its imports excluded; "
            f"goal {goal:.0f}x)")
    if "ranx" in results and results["ranx"]["compute_alone_s"]:
        r = results["ranx"]["compute_alone_s"] / ours["compute_alone_s"]
        goal = TARGETS["compute_vs_ranx_after_warmup"]
        out["compute_vs_ranx_after_warmup"] = (
            f"{'MET' if r >= goal else 'NOT MET'} ({r:.1f}x, goal {goal:.0f}x)")
    return out


def targets_all_trec(results: dict[str, dict[str, Any]]) -> dict[str, str]:
    """-m all_trec: the library and the whole CLI process against pytrec_eval's every measure."""
    out: dict[str, str] = {}
    if "pytrec_eval" not in results:
        return out
    peer = results["pytrec_eval"]
    goal = TARGETS["all_trec_vs_pytrec_eval"]
    for system, label in (("rankproof", "all_trec_library_vs_pytrec_eval"),
                          (CLI, "all_trec_cli_whole_process_vs_pytrec_eval")):
        if system not in results:
            continue
        ours = results[system]
        r = peer["total_s"] / ours["total_s"]
        cpu = peer["total_cpu_s"] / ours["total_cpu_s"]
        out[label] = (f"{'MET' if r >= goal else 'NOT MET'} ({r:.1f}x wall, {cpu:.1f}x CPU: "
                      f"{system} {ours['total_s']:.2f} s vs pytrec_eval parse + evaluate "
                      f"{peer['total_s']:.2f} s; goal {goal:.0f}x)")
    if results["rankproof"].get("compute_alone_s") and peer.get("compute_alone_s"):
        r = peer["compute_alone_s"] / results["rankproof"]["compute_alone_s"]
        out["all_trec_compute_alone_vs_pytrec_eval"] = f"{r:.1f}x (no goal)"
    return out


def compile_rankproof() -> None:
    """Byte-compile rankproof's sources, as pip does when it installs a wheel.

    An editable install has no ``.pyc`` files until Python writes them on first import,
    and with ``PYTHONDONTWRITEBYTECODE`` set (some CI images and sandboxes) it never
    does: every process would then compile ~60 modules (0.1-0.2 s here) that the peers,
    installed from wheels, get precompiled. Compiling first times what users run."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("rankproof")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(folder, quiet=1)


def _load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shape", choices=(*SHAPES, "both"),
                        help="msmarco: 6,980 x 1,000 (the default sizes); million: 1,000,000 x "
                             "10 (gen_million.py's run A and qrels); both: one after the other "
                             "in one invocation (overrides --topics/--depth/--docs)")
    parser.add_argument("--topics", type=int, default=6980)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=MSMARCO_DOCS,
                        help="size of the docid space (default: MS MARCO passage)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", type=Path, default=Path("bench-data"))
    parser.add_argument("--systems", nargs="+", choices=CHOICES, default=list(CHOICES),
                        help="rankproof always runs (the ratios need it)")
    parser.add_argument("--start-only", action="store_true",
                        help="only time rankproof --version and --help (best of 5 each)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="fresh processes per system; the best total is kept")
    parser.add_argument("--compute-repeat", type=int, default=3,
                        help="evaluate calls per process for the compute-alone figure")
    parser.add_argument("--all-trec", action="store_true",
                        help="-m all_trec against pytrec_eval's every measure (systems: "
                             "rankproof, pytrec_eval, rankproof-cli)")
    parser.add_argument("--child", choices=SYSTEMS, help=argparse.SUPPRESS)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--qrels", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if not args.child:
        start_launcher()  # before this process holds any data (see _common.Launcher)
    if args.child:
        child_main(args.child, args.run, args.qrels, args.compute_repeat, args.all_trec)
        return 0
    compile_rankproof()
    if args.start_only:
        start = cli_start()
        goal = TARGETS["cli_start_max_s"]
        for flag, seconds in start.items():
            print(f"rankproof {flag:<9} {seconds:.3f} s (best of 5; goal <= {goal} s: "
                  f"{'MET' if seconds <= goal else 'NOT MET'})")
        return 0

    shapes = _shapes(args)
    verdicts: dict[str, dict[str, str]] = {}
    agreed = True
    for shape, (topics, depth, docs) in shapes.items():
        if len(shapes) > 1:
            print(f"== shape {shape}: {topics:,} topics x {depth:,} docs ==", file=sys.stderr)
        ok, shown = run_shape(args, shape, topics, depth, docs)
        agreed = agreed and ok
        verdicts[shape] = shown
    if len(shapes) > 1:
        print("\nsummary (rankproof measure as a whole process):")
        for shape, shown in verdicts.items():
            for name, verdict in shown.items():
                if name.startswith("cli_"):
                    print(f"  {shape:<8} {name}: {verdict}")
    return 0 if agreed else 1


SHAPES = {"msmarco": (6980, 1000, MSMARCO_DOCS), "million": (1_000_000, 10, MSMARCO_DOCS)}
"""``--shape``: (topics, depth, docid space). ``msmarco``: the MS MARCO passage dev subset's
6,980 topics at depth 1,000 (`_common.write_synthetic`); ``million``: query logs' shape,
1,000,000 topics x 10 documents, one relevant each (``gen_million.write_million``'s run A)."""


def _shapes(args: argparse.Namespace) -> dict[str, tuple[int, int, int]]:
    """The shapes to run, in order: ``--shape`` (``both``: msmarco then million), else
    ``--topics``/``--depth``/``--docs`` as given."""
    if args.shape is None:
        return {"custom": (args.topics, args.depth, args.docs)}
    names = list(SHAPES) if args.shape == "both" else [args.shape]
    return {n: SHAPES[n] for n in names}


def _shape_paths(args: argparse.Namespace, shape: str, topics: int, depth: int,
                 docs: int) -> tuple[Path, Path]:
    """(run, qrels) of one shape, written first when missing."""
    t = time.perf_counter()
    if shape == "million":
        from gen_million import million_paths, write_million

        present = million_paths(args.out_dir, topics, depth, args.seed)
        wrote = not (present.qrels.exists() and present.a.exists())
        million = write_million(args.out_dir, topics, depth, args.seed)
        run, qrels = million.a, million.qrels
    else:
        paths = synthetic_paths(args.out_dir, topics, depth, args.seed, docs)
        wrote = write_synthetic(paths, topics, depth, args.seed, docs)
        run, qrels = paths.run, paths.qrels
    if wrote:
        print(f"wrote {run} and {qrels} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return run, qrels


def run_shape(args: argparse.Namespace, shape: str, topics: int, depth: int,
              docs: int) -> tuple[bool, dict[str, str]]:
    """Time every system at one shape, print the table, write its JSON:
    (every system agreed, the targets' verdicts)."""
    run_file, qrels_file = _shape_paths(args, shape, topics, depth, docs)
    paths = SyntheticPaths(run=run_file, qrels=qrels_file)
    systems = ["rankproof", *[s for s in args.systems if s != "rankproof"]]
    if args.all_trec:
        systems = [s for s in systems if s in ALL_TREC_SYSTEMS]
    load_start = _load_average()
    samples: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    script = str(Path(__file__).resolve())
    for rep in range(args.repeat):
        # Interleaved, so that a busy spell on a shared machine hits every system.
        for system in systems:
            print(f"[{rep + 1}/{args.repeat}] {system} ...", file=sys.stderr, flush=True)
            if system == CLI:
                cli = run_cli_all_trec if args.all_trec else run_cli
                samples[system].append(cli(str(paths.run), str(paths.qrels)))
                continue
            samples[system].append(run_child(
                [script, "--child", system, "--run", str(paths.run), "--qrels",
                 str(paths.qrels), "--compute-repeat", str(args.compute_repeat),
                 *(["--all-trec"] if args.all_trec else [])]))
    results = {s: aggregate(v) for s, v in samples.items()}
    for system, res in results.items():
        res["baseline_mib"] = baseline_mib(system)
        res["peak_above_baseline_mib"] = res["peak_mib"] - res["baseline_mib"]
    # pytrec_eval is trec_eval 9.0.x: its iprec_at_recall / 11pt_avg round recall
    # levels differently (ROUNDING_CHANGED); compared on the same-rank topics instead.
    skip = {"pytrec_eval": frozenset(ROUNDING_CHANGED)} if args.all_trec else None
    agreement = check_agreement(results, skip)
    info: dict[str, Any] = {
        "shape": shape, "topics": topics, "depth": depth, "docs": docs, "seed": args.seed,
        "run_file": str(paths.run), "qrels_file": str(paths.qrels),
        "run_lines": topics * depth, "repeat": args.repeat,
        "compute_repeat": args.compute_repeat, "cpus": os.cpu_count(),
        "load_start": load_start, "load_end": _load_average(),
        "python": platform.python_version(), "platform": platform.platform(),
        "measure_set": "all_trec" if args.all_trec else "four",
    }
    info["cli_start"] = cli_start() if CLI in systems and not args.all_trec else None
    info["cli_start_repeat"] = 5
    info["targets"] = targets_all_trec(results) if args.all_trec else targets(results)
    print(render(results, agreement, info))
    payload = {
        "info": info, "measures": ["all_trec"] if args.all_trec else list(MEASURES),
        "results": results,
        "ratios": {s: {"total": _ratio(r["total_s"], results["rankproof"]["total_s"]),
                       "total_cpu": _ratio(r["total_cpu_s"], results["rankproof"]["total_cpu_s"]),
                       "compute_alone": _ratio(r["compute_alone_s"],
                                               results["rankproof"]["compute_alone_s"]),
                       "peak_memory": _ratio(r["peak_mib"], results["rankproof"]["peak_mib"])}
                   for s, r in results.items()},
        "agreement": agreement,
    }
    stem = "measures-all-trec-results" if args.all_trec else "measures-results"
    out = args.out_dir / (f"{stem}.json" if shape in ("custom", "msmarco") else
                          f"{stem}-{shape}.json")
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(out)
    print(f"results written to {out}", file=sys.stderr)
    return all(a["agree"] for a in agreement), info["targets"]


if __name__ == "__main__":
    raise SystemExit(main())
