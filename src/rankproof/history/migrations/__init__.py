"""Alembic migrations of the history store (run by `rankproof.history` on open)."""
