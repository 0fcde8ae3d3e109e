"""Nested structures of tensors (lists, tuples, namedtuples, dicts), as ``tf.nest`` handles them:
a dataset element, a model's inputs and outputs, a traced function's arguments."""

__all__ = ["map_structure", "flatten"]


def map_structure(fn, value):
    """The same structure with ``fn`` applied to every leaf."""
    if isinstance(value, dict):
        return {k: map_structure(fn, v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):         # namedtuple
        return type(value)(*(map_structure(fn, v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(map_structure(fn, v) for v in value)
    return fn(value)


def flatten(value):
    """The leaves of a structure, depth first, in order (dicts in insertion order)."""
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, (list, tuple)):
        return [value]
    return [leaf for v in value for leaf in flatten(v)]
