"""models."""
__all__ = []
