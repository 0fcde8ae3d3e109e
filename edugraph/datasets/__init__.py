"""datasets."""
__all__ = []
