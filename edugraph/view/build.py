"""``graph_view``: the view of whatever the student has, an eager result, a static graph or a
traced function."""
from ..tensor import Tensor
from .eager import _from_eager
from .static import _from_function, _from_graph


def graph_view(target, names=None, session=None, feed_dict=None, title="", output=None,
               args=None, optimized=False):
    """The view of a computation.

    * eager: ``graph_view(loss)`` — ``loss`` is a tensor computed with ``requires_grad``
      inputs; ``names={"w": w, ...}`` labels leaves (variables use their own names);
    * static: ``graph_view(loss, session=sess, feed_dict={x: ...})`` — the nodes ``loss``
      needs; or a Graph (every node but the variables' initialisers) or a list of tensors and
      ops (``[loss, train_op]``), with ``output=loss`` for the gradients. Values come from one
      ``session.run`` (a node that writes a variable is not run, so viewing never trains);
    * traced function: ``graph_view(concrete_fn, args=(x, w, b), optimized=False)`` — its
      graph as traced (``optimized=True``: after the optimisation passes; a pass's name, e.g.
      ``"fold_constants"``: just after that pass), run with ``args`` fed to its inputs (an
      ``eg.function`` is traced for ``args`` first).
    """
    if hasattr(target, "get_concrete_function") or hasattr(target, "pass_stages"):
        return _from_function(target, args, optimized, title, output)
    if args is not None:
        raise TypeError("args= is for a traced function (eg.function or ConcreteFunction); "
                        "a static graph takes feed_dict={placeholder: value}.")
    if _is_static(target):
        return _from_graph(target, session, feed_dict, title, output)
    if not isinstance(target, Tensor):
        raise TypeError(f"graph_view needs a tensor (or a graph with a session), "
                        f"got {type(target).__name__}.")
    return _from_eager(target, names or {}, title)


def _is_static(target):
    items = target if isinstance(target, (list, tuple)) else [target]
    return bool(items) and all(hasattr(t, "get_operations") or
                               getattr(t, "graph", None) is not None for t in items)
