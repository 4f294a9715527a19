"""`EvalOptions`: how a run is evaluated against qrels, held and validated once.

The five knobs trec_eval's command line gives an evaluation — the relevance level
(``-l``), the topic policy (``-c``), the ranking order, ``-M`` and ``-J`` — used to
travel as loose keywords through every task and function between a command and
`evaluate`, each redeclaring the defaults. One frozen value carries them now (the
habit of `rankproof.stats.StatSettings`): one that exists is valid, so what receives
it trusts it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, get_args

from rankproof._errors import InputError
from rankproof.data import Order, Qrels, Run
from rankproof.measures._perquery import TopicPolicy

__all__ = ["DEFAULT_ORDER", "DEFAULT_REL_LEVEL", "DEFAULT_TOPICS", "ORDERS", "TOPIC_POLICIES",
           "EvalOptions"]

DEFAULT_REL_LEVEL = 1
"""trec_eval's ``-l`` default: a judgment of 1 or more is relevant."""
DEFAULT_TOPICS: TopicPolicy = "complete"
"""trec_eval ``-c``: every qrels topic counts, a topic the run lacks scores 0."""
DEFAULT_ORDER: Order = "score"
"""trec_eval's order: by score, ties by docid descending."""
TOPIC_POLICIES: tuple[str, ...] = get_args(TopicPolicy)
ORDERS: tuple[str, ...] = get_args(Order)


def _choice(value: object, field: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"{field} must be one of {', '.join(choices)}, found {value!r}",
                         field=field)
    return value


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """How a run is evaluated: one frozen, validated value.

    * ``rel_level``: the least judgment that counts as relevant (trec_eval ``-l``).
    * ``topics``: which topics count (`TOPIC_POLICIES`; ``"complete"`` is trec_eval
      ``-c``, ``"intersection"`` trec_eval without it).
    * ``order``: ``"score"`` (trec_eval's) or ``"rank"`` (the run's rank column).
    * ``max_retrieved``: trec_eval ``-M``, the documents kept per topic (None: all; 0
      keeps none, which the commands refuse as a run left empty).
    * ``judged_only``: trec_eval ``-J``, unjudged documents are dropped first.

    An invalid value raises `InputError` naming the field.

    >>> EvalOptions(rel_level=2).replace(order="rank").order
    'rank'
    """

    # ``metadata``: how a command line offers each setting (`rankproof.cli._derived`).
    rel_level: int = field(default=DEFAULT_REL_LEVEL, metadata={
        "flags": ("-l", "--rel-level"), "metavar": "N",
        "help": "Minimum label counted as relevant (trec_eval -l)."})
    topics: TopicPolicy = field(default=DEFAULT_TOPICS, metadata={
        "flags": ("--topics",),
        "help": "complete: every qrels topic counts, missing ones score 0 (trec_eval -c); a "
                "run sharing no topic with the qrels is refused. intersection: only topics in "
                "both (trec_eval 9 without -c). complete-allow-disjoint: as complete, and a "
                "run sharing no topic scores 0 everywhere."})
    order: Order = field(default=DEFAULT_ORDER, metadata={
        "flags": ("--order",),
        "help": "Rank by score, ties by docid descending (trec_eval), or by the run's rank "
                "column."})
    max_retrieved: int | None = field(default=None, metadata={
        "flags": ("-M", "--max-retrieved"), "metavar": "N", "min": 0,
        "help": "Evaluate only the first N documents of each topic (trec_eval -M)."})
    judged_only: bool = field(default=False, metadata={
        "flags": ("-J", "--judged-only"),
        "help": "Remove unjudged documents before evaluating (trec_eval -J; rarely wise)."})

    def __post_init__(self) -> None:
        if isinstance(self.rel_level, bool) or not isinstance(self.rel_level, int):
            raise InputError(f"rel_level must be an integer, found {self.rel_level!r}",
                             field="rel_level")
        object.__setattr__(self, "topics", _choice(self.topics, "topics", TOPIC_POLICIES))
        object.__setattr__(self, "order", _choice(self.order, "order", ORDERS))
        m = self.max_retrieved
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 0):
            raise InputError(f"max_retrieved must be an integer >= 0 or None, found {m!r}",
                             field="max_retrieved")
        if not isinstance(self.judged_only, bool):
            raise InputError(f"judged_only must be True or False, found {self.judged_only!r}",
                             field="judged_only")

    def replace(self, **changes: Any) -> EvalOptions:
        """A copy with ``changes`` applied, validated like a new one."""
        return dataclasses.replace(self, **changes)

    @property
    def limits_run(self) -> bool:
        """Whether ``-M`` or ``-J`` changes the run before it is evaluated."""
        return self.max_retrieved is not None or self.judged_only

    def notes(self) -> tuple[str, ...]:
        """What ``-M`` and ``-J`` did, said beside every result they change (never silent)."""
        notes = []
        if self.max_retrieved is not None:
            whose = "the run's" if self.order == "rank" else "trec_eval's"
            notes.append(f"only the first {self.max_retrieved} documents of each topic were "
                         f"evaluated (-M, {whose} rank order)")
        if self.judged_only:
            notes.append("unjudged documents were removed before evaluating (-J): measures "
                         "over judged documents only, not comparable with ordinary ones")
        return tuple(notes)

    def keywords(self) -> dict[str, Any]:
        """``rel_level``, ``topics`` and ``order``: `evaluate`'s own keywords."""
        return {"rel_level": self.rel_level, "topics": self.topics, "order": self.order}

    def limited(self, run: Run, qrels: Qrels) -> Run | None:
        """``run`` after ``-M`` and ``-J`` (itself when neither is set); None when they
        leave no document (`rankproof.measures.trec_eval_run`)."""
        if not self.limits_run:
            return run
        from rankproof.measures._treceval import trec_eval_run

        return trec_eval_run(run, qrels, max_retrieved=self.max_retrieved,
                             judged_only=self.judged_only, order=self.order)
