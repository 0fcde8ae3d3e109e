"""AutoGraph: ``eg.function`` turns Python control flow on tensors into graph control flow.

While a traced function is built, its tensors have no values, so ``if t:`` cannot pick a
branch and ``while t:`` cannot count. AutoGraph (the lecture's "Python-to-Python compiler")
rewrites the function's source before tracing it: each ``if``, ``while`` and ``for`` becomes
small functions and a call that decides *while tracing* (``operators.py``):

* on a Python value (``if training:``, ``for i in range(3):``) it runs as Python does, so a
  Python loop is unrolled into the graph (the slide's "static Python loop, not converted");
* on a tensor (``while eg.reduce_sum(x) > 1:``, ``for i in eg.range(n):``) it becomes
  ``eg.cond`` or ``eg.while_loop``: one node that decides when the graph runs.

``eg.autograph.to_code(f)`` shows what the rewrite wrote; ``eg.function(f, autograph=False)``
traces the code as written, where ``if`` on a tensor raises and asks for ``eg.cond``.

Like TF's, the conversion is done once per function, when it is first traced, and costs
nothing after. Differences from TF's, on purpose (to keep ``to_code`` short enough to read):
only the decorated function is converted, not the functions it calls (decorate those with
``eg.function`` too); ``break``, ``continue`` and ``return`` inside a loop, and a loop's
``else:``, stay Python (a tensor condition there raises an error that says so).
"""
from types import SimpleNamespace

from .conversion import convert, source

__all__ = ["to_code", "to_graph", "experimental"]


def to_code(entity, recursive=True, experimental_optional_features=None):
    """The converted source of a function (or of an ``eg.function``'s Python function)."""
    return source(entity)


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """The converted function itself: call it while a graph is built (``eg.function`` calls
    it for you)."""
    return convert(getattr(entity, "python_function", entity))


def do_not_convert(func=None):
    """A decorator: ``eg.function`` traces this function as written (TF's
    ``tf.autograph.experimental.do_not_convert``)."""
    if func is None:
        return do_not_convert
    func.autograph_skip = True
    return func


experimental = SimpleNamespace(do_not_convert=do_not_convert)  # tf.autograph.experimental
