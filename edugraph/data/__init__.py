"""data."""
__all__ = []
