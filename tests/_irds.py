"""One offline ir_datasets home for the tests that register datasets from local files.

Imported by a test module (``from tests._irds import irds_home  # noqa: F401``), the fixture
applies to every test there: ir_datasets' cache is a fresh folder, and a download attempted
anywhere fails the test, so nothing here can ever reach the network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def irds_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from ir_datasets.util.download import RequestsDownload

    home = tmp_path / "irds-home"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))

    def no_network(self: Any) -> Any:
        raise AssertionError(f"ir_datasets tried to download {getattr(self, 'url', self)}")

    monkeypatch.setattr(RequestsDownload, "stream", no_network)
    return home
