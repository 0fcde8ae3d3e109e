"""Helpers that drive JupyterLab in a real browser (see harness.py)."""
