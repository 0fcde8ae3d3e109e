"""losses."""
__all__ = []
