"""initializers."""
__all__ = []
