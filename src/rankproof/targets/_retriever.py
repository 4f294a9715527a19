"""`RetrieverTarget`: a built-in retrieval stage (BM25, dense, fusion, rerank) as a target.

It lets the gate and the harness evaluate rankproof's own stages and an
external system through one interface, so a team can gate "our service" and
"the BM25 baseline" with the same checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rankproof._errors import InputError, TargetError
from rankproof.targets._base import case_label, check_name
from rankproof.targets._case import Case, TargetResponse

if TYPE_CHECKING:
    from rankproof.retrieval import Docs, Retriever, StageOutput


class RetrieverTarget:
    """Wrap a `rankproof.retrieval.Retriever` so that it answers one case at a time.

    ``docs``, when given, are indexed once here; otherwise the retriever must
    already be indexed. ``name`` defaults to the retriever's own name. At most
    ``k`` ids are returned per case, ranked by trec_eval's rule (score
    descending, ties by document id descending, byte-wise), the same order the
    stage's run is evaluated in.

    ``latency_ms`` is the stage's own per-query measurement
    (``StageOutput.latency_ms``) rather than the time around the Python call,
    so that `invoke` and the batched `invoke_many` report the same quantity
    and agree with the latencies of the retrieval pipeline. ``meta`` carries
    the stage's ``config`` and ``notes`` (e.g. a test-double caveat), which a
    report must not lose, and ``timing``: the conditions the latency was
    measured under (`rankproof.retrieval.TimingStamp`).

    Timed as ``rankproof eval`` times a stage: the first call warms the stage up
    on its first ``warmup`` queries (results discarded, time reported in
    ``timing``, never in ``latency_ms``; 0: no warm-up), and every search runs
    with torch's intra-op threads set to ``threads`` (None: torch's own); the
    defaults are ``rankproof eval``'s (`rankproof.retrieval.DEFAULT_WARMUP`,
    `DEFAULT_THREADS`).
    """

    def __init__(self, retriever: Retriever, name: str | None = None, *, k: int = 10,
                 docs: Docs | None = None, warmup: int = 8, threads: int | None = 1) -> None:
        if not hasattr(retriever, "search"):
            raise TypeError(f"retriever must have a search(queries, k) method, got "
                            f"{type(retriever).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"k must be a positive integer, got {k!r}", field="k")
        self.retriever = retriever
        self.name = check_name(name if name is not None else getattr(retriever, "name", None))
        self.k = k
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
            raise InputError(f"warmup must be an integer >= 0, got {warmup!r}", field="warmup")
        self.warmup = warmup
        self.threads = threads
        self._warmed = warmup == 0
        if docs is not None:
            retriever.index(docs)

    def __repr__(self) -> str:
        return f"RetrieverTarget(name={self.name!r}, k={self.k})"

    def invoke(self, case: Case) -> TargetResponse:
        """Search for one case."""
        return self._search([case], case_label(self.name, case), case.id)[0]

    def invoke_many(self, cases: Sequence[Case]) -> list[TargetResponse]:
        """Search for all cases in one batch (one call to ``search``), in input order.

        Case ids must be unique, because the stage keys its results by query id.
        """
        cases = list(cases)
        if not cases:
            return []
        ids = [c.id for c in cases]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InputError(f"case ids must be unique in one batch; {dup!r} is repeated",
                             field="id")
        label = (case_label(self.name, cases[0]) if len(cases) == 1
                 else f"target {self.name!r}, cases {ids[0]!r}..{ids[-1]!r} ({len(ids)})")
        return self._search(cases, label, cases[0].id if len(cases) == 1 else None)

    def _search(self, cases: Sequence[Case], where: str,
                case_id: str | None) -> list[TargetResponse]:
        """One call of the stage; a failure names the case when the batch is one case."""
        # Imported here: rankproof.retrieval loads the retrieval libraries, which a gate
        # over an HTTP target never needs.
        from rankproof.retrieval import timed_search

        try:
            timed = timed_search(self.retriever, [(c.id, c.query) for c in cases], self.k,
                                 warmup=0 if self._warmed else self.warmup,
                                 threads=self.threads)
        except Exception as exc:
            raise TargetError(f"{where}: search raised {type(exc).__name__}: {exc}",
                              case_id=case_id, target=self.name) from exc
        self._warmed = True
        out: StageOutput = timed.output
        rows: dict[str, list[tuple[str, float]]] = {}
        for qid, docid, score in out.run.iter_rows():
            rows.setdefault(qid, []).append((docid, score))
        meta = {"config": dict(out.config), "notes": tuple(out.notes),
                "timing": timed.stamp.as_dict()}
        responses = []
        for case in cases:
            ranked = sorted(rows.get(case.id, ()), key=lambda r: (r[1], r[0].encode("utf-8")),
                            reverse=True)[: self.k]
            try:
                latency = float(out.latency_ms[case.id])
            except KeyError:
                raise TargetError(f"{case_label(self.name, case)}: the stage reported no latency "
                                  "for this query", case_id=case.id, target=self.name) from None
            responses.append(TargetResponse(ranked_ids=tuple(d for d, _ in ranked),
                                            latency_ms=latency, meta=meta))
        return responses
