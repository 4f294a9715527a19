"""What a resampling or simulation request will cost, checked before any of it runs.

``resamples``, ``simulations`` and ``batch`` are numbers a user types, and a
typo of a few zeros (``--resamples 1000000000000``) used to end in a
``MemoryError`` traceback after minutes of work, or in a job that runs until
CI kills it. Every public entry point that resamples (the tests in this
package, `rankproof.comparison`, the harness and the gate through them)
therefore estimates the request's cost from its sizes first and refuses it
with the estimate when it is over a bound of `rankproof._limits`:

* memory: more than `MAX_MEMORY_FRACTION` of the machine's RAM at once;
* time: more than `MAX_ESTIMATED_SECONDS`.

The estimates are deliberately *lower bounds*. Memory counts only the arrays
the procedure certainly holds at once (the per-resample results it keeps,
plus one chunk of scratch, which ``batch`` bounds). Time counts element
operations — one random draw, one table look-up, one gathered value — and
divides by `OPERATIONS_PER_SECOND`, a rate several times faster than the
fastest of these kernels measured on a development machine (1–3 × 10⁸
operations/s on two cores of a 2020s x86 server). An estimate can therefore
only err on the short side: what is refused would certainly have taken
longer than the bound, and nothing that runs in practice is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import rankproof._limits as _limits
from rankproof._errors import ConfigError, InputError
from rankproof.stats._validate import MEMORY_BUDGET, rows_per_batch

OPERATIONS_PER_SECOND = 1e9
"""Element operations per second assumed by the time estimate.

Measured on the development machine (two cores): sign-flip look-ups
1.4 × 10⁸/s, bootstrap draws and gathers 1–1.8 × 10⁸/s, Tukey permutation
cells 1.7–3.4 × 10⁸/s. Assuming 10⁹ makes every estimate about 3–10 times
shorter than the real run on that machine, so a refusal is never a close call."""

BLAS_SHARE = 1 / 64
"""A multiply-add inside a matrix product (the simulated randomization power test)
counts as this share of an element operation: BLAS runs them about 100 times
faster than numpy's element-wise loops (1.4 × 10¹⁰/s measured)."""


@dataclass(frozen=True)
class Cost:
    """An estimate: element ``operations`` and peak ``memory_bytes`` (both lower bounds).

    ``a.then(b)`` is the cost of running ``a`` and then ``b``: operations
    add up, memory is the larger peak (the first one's arrays are freed).
    """

    operations: float
    memory_bytes: float

    @property
    def seconds(self) -> float:
        """The time estimate at `OPERATIONS_PER_SECOND`."""
        return self.operations / OPERATIONS_PER_SECOND

    def then(self, other: Cost) -> Cost:
        """The cost of this, followed by ``other``."""
        return Cost(self.operations + other.operations,
                    max(self.memory_bytes, other.memory_bytes))

    def times(self, k: int) -> Cost:
        """The cost of doing this ``k`` times in a row."""
        return Cost(self.operations * k, self.memory_bytes if k > 0 else 0.0)


NOTHING = Cost(0.0, 0.0)


def randomization_cost(n: int, resamples: int, batch: int | None = None) -> Cost:
    """The sign-flip test of `rankproof.stats.randomization_test` on ``n`` queries."""
    groups = (n + 7) // 8
    words = (groups + 7) // 8
    exact = n < 63 and 2**n <= resamples
    total = 2**n if exact else resamples
    per_row = 8 * words + 2 * groups + 24
    rows = rows_per_batch(batch, per_row, total)
    return Cost(float(total) * (groups + words + 4), float(rows) * per_row + 2048.0 * groups)


def bootstrap_cost(n: int, resamples: int, batch: int | None = None,
                   studentized: bool = False, keep: int = 2) -> Cost:
    """The paired bootstrap of `rankproof.stats.bootstrap_ci` on ``n`` queries.

    ``keep`` is how many float arrays of length ``resamples`` are alive at
    once (the means and the copy a quantile makes; more when studentized).
    """
    rows = rows_per_batch(batch, 32 * n, resamples)
    arrays = keep + (3 if studentized else 0)
    draws = float(resamples) * n * (2 if studentized else 1)
    return Cost(draws + resamples, 8.0 * resamples * arrays + 32.0 * rows * n)


def paired_test_cost(n: int, test: str, ci_method: str | None, resamples: int,
                     batch: int | None = None) -> Cost:
    """`rankproof.stats.paired_test`: the percentile bootstrap reported beside every test,
    the test's own interval (inverting it costs a second pass of the test), then the test."""
    method = ci_method or {"t": "t", "bootstrap": "percentile", "wilcoxon": "wilcoxon",
                           "sign": "sign"}.get(test, "randomization")
    boot = (bootstrap_cost(n, resamples, batch)
            if test in ("randomization", "bootstrap") or method in (
                "randomization", "percentile", "studentized") else NOTHING)
    sort = Cost(n * max(1.0, math.log2(max(n, 2))), 8.0 * n)
    if method == "randomization":
        interval = randomization_cost(n, resamples, batch)
    elif method == "studentized":
        interval = bootstrap_cost(n, resamples, batch, studentized=True)
    elif method in ("wilcoxon", "sign"):
        interval = Cost(128 * sort.operations, sort.memory_bytes)  # two bisections on the test
    else:  # t, or the percentile bootstrap already counted
        interval = NOTHING
    if test == "randomization":
        tested = randomization_cost(n, resamples, batch)
    elif test == "bootstrap":
        tested = bootstrap_cost(n, resamples, batch, keep=3)
    else:  # t, wilcoxon, sign: a sort at most
        tested = sort
    return boot.then(interval).then(tested)


def tukey_cost(queries: int, systems: int, resamples: int, batch: int | None = None) -> Cost:
    """`rankproof.stats.tukey_hsd_randomized` over ``systems`` × ``queries`` scores."""
    m = max(systems, 2)
    rows = rows_per_batch(batch, 32 * queries * max(m, 4), resamples)
    per_cell = 1.0 if m <= 8 else math.log2(m)  # a table look-up, or a sort of m keys
    table = 8.0 * m * math.factorial(m) if m <= 8 else 0.0
    return Cost(float(resamples) * queries * m * per_cell,
                8.0 * resamples + 32.0 * rows * queries * max(m, 4) + table)


def simulated_power_cost(n: int, simulations: int, test: str, resamples: int,
                         batch: int | None = None) -> Cost:
    """`rankproof.stats.simulated_power` drawing ``simulations`` samples of ``n`` differences."""
    step = rows_per_batch(batch, 32 * n, simulations)
    draws = float(simulations) * n * 2
    if test != "randomization":
        return Cost(draws, 32.0 * step * n)
    if batch is None:
        step = max(1, min(step, MEMORY_BUDGET // max(1, 16 * resamples)))
    products = float(simulations) * resamples * n * BLAS_SHARE
    compares = float(simulations) * resamples
    signs = float(resamples) * n
    return Cost(draws + products + compares + signs,
                signs + 32.0 * step * n + MEMORY_BUDGET)


# -- the check -----------------------------------------------------------------------


def _duration(seconds: float) -> str:
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600),
                       ("minutes", 60)):
        if seconds >= size:
            value = f"{seconds / size:.3g}"
            return f"{value} {unit[:-1] if value == '1' else unit}"
    return f"{seconds:.3g} s"


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def memory_limit_bytes() -> float | None:
    """The memory bound: `MAX_MEMORY_FRACTION` of this machine's RAM (None when unknown)."""
    total = _limits.machine_memory_bytes()
    return None if total is None else _limits.MAX_MEMORY_FRACTION * total


def check_cost(cost: Cost, what: str, *, knobs: str = "resamples",
               error: type[InputError] | type[ConfigError] = InputError,
               field: str | None = None) -> Cost:
    """Refuse ``cost`` with its estimate when it exceeds the time or memory bound.

    ``what`` names the request in the message (``"paired_test with
    resamples=10000 on 50 queries"``), ``knobs`` the parameters that would
    lower it. Raises ``error`` (`InputError` with ``field``, or `ConfigError`
    for a checks or config file); returns ``cost`` when it is within bounds.
    """
    problems = []
    if cost.seconds > _limits.MAX_ESTIMATED_SECONDS:
        problems.append(
            f"about {cost.operations:.3g} operations, at least {_duration(cost.seconds)} at "
            f"{OPERATIONS_PER_SECOND:.0e} operations/s (the limit is "
            f"{_duration(_limits.MAX_ESTIMATED_SECONDS)}, RANKPROOF_MAX_ESTIMATED_SECONDS)")
    limit = memory_limit_bytes()
    if limit is not None and cost.memory_bytes > limit:
        problems.append(
            f"at least {_size(cost.memory_bytes)} of memory (the limit is {_size(limit)}, "
            f"{_limits.MAX_MEMORY_FRACTION:.0%} of this machine's RAM)")
    if problems:
        message = (f"{what} is estimated to need {' and '.join(problems)}; refused before "
                   f"starting: lower {knobs}")
        if issubclass(error, InputError):
            raise error(message, field=field)
        raise error(message)
    return cost
