"""A search service behind an `HttpTarget` as a discovery searcher: a real server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests._jsonserver import serve

from rankproof import TargetError
from rankproof.discovery import (
    DiscoveryCase,
    TargetSearcher,
    as_searcher,
    calibrate_min_score,
    evaluate_discovery,
)
from rankproof.targets import HttpTarget

INDEX = {"quality": [("dq-rules", 3.0), ("profiler", 1.5)],
         "schedule": [("scheduler", 2.5), ("dq-rules", 0.5)]}


def _reply(body: dict[str, str]) -> dict[str, object]:
    hits = next((v for word, v in INDEX.items() if word in body["query"]), [])
    if "broken" in body["query"]:
        return {"ids": ["a", "b"], "scores": [1.0]}
    return {"ids": [d for d, _ in hits], "scores": [s for _, s in hits]}


@pytest.fixture
def url() -> Iterator[str]:
    with serve(_reply, "/search") as base:
        yield base


CASES = [DiscoveryCase("check data quality", "dq-rules"),
         DiscoveryCase("schedule a job", "scheduler"),
         DiscoveryCase("book a meeting room")]


def test_scores_from_the_service_drive_the_evaluators(url: str) -> None:
    target = HttpTarget(url, "svc", scores_key="scores")
    searcher = as_searcher(target)
    assert isinstance(searcher, TargetSearcher)
    report = evaluate_discovery(searcher, CASES, abstain_threshold=1.0)
    assert report.failure_classes["hit_rank_1"] == 2
    assert report.failure_classes["abstention_ok"] == 1  # nothing came back
    assert not report.degraded and report.identity["target"] == "svc"
    floor = calibrate_min_score(TargetSearcher(target, version="7"), CASES)
    assert floor.identity == {"kind": "target", "target": "svc", "version": "7",
                              "mode": "target"}


def test_without_scores_the_searcher_is_marked_rank_based(url: str) -> None:
    searcher = TargetSearcher(HttpTarget(url, "svc"))
    report = evaluate_discovery(searcher, CASES)
    assert report.degraded and any("1/rank" in n for n in report.notes)


def test_scores_that_do_not_match_the_ids_are_a_target_error(url: str) -> None:
    searcher = TargetSearcher(HttpTarget(url, "svc", scores_key="scores"))
    with pytest.raises(TargetError, match="1 scores for 2 ranked ids"):
        evaluate_discovery(searcher, [DiscoveryCase("broken query", "a")])
