"""rankproof's test suite (a regular package, so that `tests.*` imports resolve here and not
to a `tests` package some dependency installs into site-packages, as ppi-python does)."""
