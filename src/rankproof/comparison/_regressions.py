"""A reproducible sample of regressed queries, for a reviewer to read and label.

A verdict says a candidate is worse (or not detectably different) on average;
a reviewer decides *why* by reading the queries that got worse. Reading all of
them is rarely possible, and reading the worst ten is biased toward one kind
of failure, so `sample_regressions` draws a seeded simple random sample of the
regressed queries (`rankproof inspect` turns it into review records).

A **regression** is a query whose per-query value moved in the measure's bad
direction: lower when higher is better, higher when lower is better. Ties are
not regressions. The fall of a query is the size of that move (always > 0).

The sample depends on the seed and on the set of (qid, values) only, never on
the order the queries were given in (invariant 5): the regressed qids are put
in canonical order (sorted) before ``numpy.random.default_rng(seed)`` draws
``n`` of them without replacement; when ``n`` or fewer queries regressed, all
of them are kept. The sample is listed largest fall first (ties by qid), the
order a reviewer reads in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rankproof._errors import InputError

__all__ = ["REGRESSION_SAMPLE_SIZE", "Regressions", "sample_regressions"]

REGRESSION_SAMPLE_SIZE = 30
"""Queries drawn when the caller does not say: enough to see the main kinds of failure, few
enough to read in one sitting."""


@dataclass(frozen=True)
class Regressions:
    """A seeded sample of regressed queries.

    ``population`` is how many queries regressed; ``qids`` the sampled ones,
    largest fall first (ties by qid), with ``falls`` their falls in the same
    order; ``n`` the sample size asked for (``len(qids) == min(n, population)``)
    and ``seed`` the seed of the draw, so that the same call draws the same sample.
    """

    population: int
    qids: tuple[str, ...]
    falls: tuple[float, ...]
    n: int
    seed: int

    @property
    def complete(self) -> bool:
        """Whether every regressed query is in the sample (no draw was needed)."""
        return len(self.qids) == self.population


def _check(qids: Sequence[str], baseline_values: Sequence[float],
           candidate_values: Sequence[float], n: int, seed: int) -> None:
    """Validate before computing: the computation then trusts its inputs."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise InputError(f"the sample size must be a positive integer, got {n!r}", field="n")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"the seed must be a non-negative integer, got {seed!r}",
                         field="seed")
    if not len(qids) == len(baseline_values) == len(candidate_values):
        raise InputError(f"{len(qids)} qids but {len(baseline_values)} baseline and "
                         f"{len(candidate_values)} candidate values: the values are paired "
                         "by query", field="qids")
    seen: set[str] = set()
    for q in qids:
        if not isinstance(q, str):
            raise InputError(f"query ids must be strings, got {q!r:.40}", field="qids")
        if q in seen:
            raise InputError(f"query {q!r:.80} is given twice; the values are paired by "
                             "query id", field="qids")
        seen.add(q)
    for side, values in (("baseline", baseline_values), ("candidate", candidate_values)):
        for q, v in zip(qids, values, strict=True):
            if isinstance(v, bool) or not isinstance(v, int | float | np.number) \
                    or not math.isfinite(float(v)):
                raise InputError(f"the {side} value of query {q!r:.80} must be a finite "
                                 f"number, got {v!r:.40}", field=f"{side}_values")


def sample_regressions(
    qids: Sequence[str],
    baseline_values: Sequence[float],
    candidate_values: Sequence[float],
    *,
    higher_is_better: bool,
    n: int = REGRESSION_SAMPLE_SIZE,
    seed: int = 0,
) -> Regressions:
    """Draw up to ``n`` of the queries whose value fell from baseline to candidate.

    ``qids`` pairs the two value sequences (position *i* of each is query
    ``qids[i]``). Same seed and same (qid, value) pairs give the same sample,
    whatever order they come in; see the module docstring for the rules.

    >>> r = sample_regressions(["a", "b", "c", "d"], [0.5, 0.5, 0.5, 0.5],
    ...                        [0.1, 0.6, 0.3, 0.5], higher_is_better=True, n=5)
    >>> r.population, r.qids
    (2, ('a', 'c'))
    """
    _check(qids, baseline_values, candidate_values, n, seed)
    sign = 1.0 if higher_is_better else -1.0
    falls = {q: sign * (float(b) - float(c))
             for q, b, c in zip(qids, baseline_values, candidate_values, strict=True)}
    regressed = sorted(q for q, fall in falls.items() if fall > 0)
    if len(regressed) <= n:
        chosen = regressed
    else:
        rng = np.random.default_rng(int(seed))
        picks = rng.choice(len(regressed), size=int(n), replace=False)
        chosen = [regressed[int(i)] for i in picks]
    chosen.sort(key=lambda q: (-falls[q], q))
    return Regressions(population=len(regressed), qids=tuple(chosen),
                       falls=tuple(falls[q] for q in chosen), n=int(n), seed=int(seed))
