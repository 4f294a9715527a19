"""Dashboard tests reuse the history tests' stores: the PostgreSQL cluster and the twenty
planted results, on each database; the report tests' headless Chromium."""

from tests.history.conftest import pg_cluster, planted_store  # noqa: F401 - fixtures
from tests.report._browser import browser  # noqa: F401 - fixture
