"""The fuzz suite's budgets: scoped to its own tests, ten times deeper under ``long``.

The suite must not change how the rest of the test suite runs Hypothesis: it
never loads a profile, so the default run of ``tests/measures`` and the other
folders keeps Hypothesis' defaults and their own explicit settings.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings
from tests.hostile._fuzz import LONG_FACTOR, LONG_PROFILE, fuzz_settings


@pytest.fixture
def restore_profile() -> Iterator[None]:
    name = settings.get_current_profile_name()
    yield
    settings.load_profile(name)


def test_default_profile_is_deterministic_and_sized_as_asked(restore_profile: None) -> None:
    settings.load_profile("default")
    s = fuzz_settings(7)
    assert (s.max_examples, s.derandomize, s.deadline, s.database) == (7, True, None, None)


def test_long_profile_is_ten_times_deeper_and_random(restore_profile: None) -> None:
    settings.load_profile(LONG_PROFILE)
    s = fuzz_settings(7)
    assert (s.max_examples, s.derandomize) == (7 * LONG_FACTOR, False)


def test_the_suite_loads_no_profile_for_the_others() -> None:
    """Only ``--hypothesis-profile`` chooses the profile; importing the suite changes nothing."""
    import tests.hostile._fuzz  # noqa: F401

    current = settings.get_current_profile_name()
    # Hypothesis itself loads its built-in "ci" profile when the CI variable is set.
    assert current in ("default", "ci", LONG_PROFILE)
    if current == "default":
        assert settings().max_examples == 100  # Hypothesis' own default, untouched
        assert settings().derandomize is False
