"""layers."""
__all__ = []
