"""``rankproof compare`` at a million topics, against ``rankproof measure`` of the same runs.

Usage::

    .venv/bin/python benchmarks/bench_compare_scale.py                  # 1,000,000 x 10
    .venv/bin/python benchmarks/bench_compare_scale.py --topics 100000  # a quick look

Generates (once, outside the repository, `gen_million.py`) a one-relevant qrels and two
runs of ``--depth`` documents per topic, then runs, each in its own fresh process:

* ``rankproof measure QRELS A B -m nDCG@10 -m RR@10`` (the same two runs, the same
  measures), and
* ``rankproof compare QRELS A B -m nDCG@10 -m RR@10`` with every default (10,000
  resamples, Holm, the table on standard output).

For each it prints wall and CPU time and the peak resident memory *of that child*
(``ru_maxrss`` from ``os.wait4`` on its pid), then ``compare ÷ measure`` for both. The
targets (issue 23): compare within 3× of measure's time and 2× its peak memory.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _HERE:
    sys.path.append(sys.path.pop(0))

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from _common import start_launcher, timed_child  # noqa: E402
from gen_million import add_million_arguments, write_million  # noqa: E402

MEASURES = ("-m", "nDCG@10", "-m", "RR@10")


def timed(argv: list[str]) -> dict[str, Any]:
    """Run ``argv``; its wall time, CPU time and peak RSS (its own, from ``wait4``)."""
    out, err, usage = timed_child(argv)
    if usage["returncode"] != 0:
        raise RuntimeError(f"{argv} failed ({usage['returncode']}):\n{err[-4000:]!r}")
    return {"wall_s": usage["wall_s"], "cpu_s": usage["cpu_s"], "peak_mib": usage["peak_mib"],
            "stdout": out.decode("utf-8", "replace")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_million_arguments(ap, Path("bench-data"))
    ap.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = ap.parse_args()
    start_launcher()  # before any data is generated here (see _common.Launcher)
    paths = write_million(args.out_dir, args.topics, args.depth)
    exe = str(Path(sys.executable).with_name("rankproof"))
    files = [str(paths.qrels), str(paths.a), str(paths.b)]
    measure = timed([exe, "measure", *files, *MEASURES, "--format", "csv"])
    compare = timed([exe, "compare", *files, *MEASURES])
    figures = {
        "topics": args.topics, "depth": args.depth,
        "measure": {k: v for k, v in measure.items() if k != "stdout"},
        "compare": {k: v for k, v in compare.items() if k != "stdout"},
        "time_ratio": compare["wall_s"] / measure["wall_s"],
        "cpu_ratio": compare["cpu_s"] / measure["cpu_s"],
        "peak_ratio": compare["peak_mib"] / measure["peak_mib"],
    }
    print(compare["stdout"])
    for name in ("measure", "compare"):
        f = figures[name]
        print(f"{name:8s} wall {f['wall_s']:7.1f} s   cpu {f['cpu_s']:7.1f} s   "
              f"peak {f['peak_mib']:8.0f} MiB")
    print(f"compare / measure: time {figures['time_ratio']:.2f}x (target <= 3), "
          f"cpu {figures['cpu_ratio']:.2f}x, peak {figures['peak_ratio']:.2f}x (target <= 2)")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
