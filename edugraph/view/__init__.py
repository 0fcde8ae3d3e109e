"""A plain picture of a computation: its nodes, their values and their gradients.

This is what the graph inspector draws, and what a notebook prints where widgets do not run.
It reads a computation through public links only (an eager tensor's ``_op`` / ``_inputs``, a
static graph's ``get_operations()``) and keeps, for every node and every edge, plain numpy
numbers, so a widget never reaches into an op.

The gradients come from the same rule ``backward()`` uses, walked here by hand so that every
intermediate step can be kept: each node's op turns the gradient arriving at its output into one
gradient per input (``op.backward``); a broadcast input's share is summed back to its shape
(``sum_to_shape``); where a value fans out, the shares arriving from its consumers are *summed*.

>>> x, w, b = (eg.tensor(v, requires_grad=True) for v in (2.0, -1.0, 3.0))
>>> view = eg.graph_view((w * x + b) ** 2, names={"x": x, "w": w, "b": b})
>>> print(view)          # a table: node, value, gradient, what each edge carries
>>> view.update(w=0.5)   # new leaf value: forward and backward run again

Static graphs get the same view: ``graph_view(loss, session=sess, feed_dict={...})`` fetches
every node's value in one ``sess.run`` and then walks ``op.backward`` on those values exactly as
above, so the gradient at a node is what ``eg.gradients(loss, node)`` computes. A traced
function (``graph_view(concrete_fn, args=(...), optimized=True)``) is run the same way in a
Session of its graph, before or after the optimisation passes. Name scopes can be collapsed
(``view.collapse("layer1")``) and the gradient nodes of ``eg.gradients`` hidden
(``view.show_gradient_nodes(False)``): the picture and the text then show fewer boxes.

The package, by job: ``model.py`` (nodes, edges, the backward walk, the step-by-step walk, what
is shown), ``eager.py`` and ``static.py`` (building a view from each mode), ``text.py`` (the
tables ``print(view)`` shows), ``display.py`` (the boxes and links on screen: collapsed scopes,
a summary of a big graph by parts) and ``frame.py`` (one moment of the walk as plain data, with
``rules.py``'s words for each op: its symbol, its gate, its local rule). The widgets draw a frame;
they never reach into an op.
"""
from .build import graph_view
from .model import Edge, GraphView, Node, summed_axes
from .numbers import number, shape_text, short

__all__ = ["graph_view", "GraphView", "Node", "Edge"]
