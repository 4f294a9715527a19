"""Renderers: turn results into text for terminals, files and CI systems."""
