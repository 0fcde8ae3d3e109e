"""GraphInspector: see a computation's graph, its values and its gradients, node by node.

    >>> GraphInspector(loss)                                # an eager result
    >>> GraphInspector(f, x=2.0, w=-1.0, b=3.0)             # a function of scalar inputs
    >>> GraphInspector(loss, session=sess, feed_dict={...})  # a static graph
    >>> GraphInspector(graph, session=sess, feed_dict={...}, output=loss)   # all of it
    >>> GraphInspector(f, args=(x, w, b), optimized=True)   # an eg.function, after its passes

Name scopes can be collapsed to one box each (the "collapse" list, or a click on a collapsed box
to open it again), and the gradient nodes that ``eg.gradients`` or an optimizer added can be
hidden (the "gradient nodes" box; hidden at first in graphs of more than 40 nodes).

The picture is ONE plotly FigureWidget whose traces (edges, active edges, arrows' labels, nodes,
gate names, rings) are rewritten in place inside ``figure.batch_update()`` whenever something
changes, so a saved notebook holds one plotly bundle and the browser gets one message per change.
"""
import html
import math

import ipywidgets as w
import plotly.graph_objects as go

import edugraph as eg
from edugraph.view import GraphView, graph_view

from .detail import node_detail
from .scene import Scene

BIG_GRAPH = 40                  # more nodes than this: gradient nodes start hidden
WIDEST = 900                    # px: a notebook's output area is about 950 px wide
LEGEND = ("<small>● op &nbsp; ■ input &nbsp; ◆ variable &nbsp; ▪ constant &nbsp; ▶ placeholder "
          "&nbsp;|&nbsp; colour: <span style='color:rgb(33,102,172)'>■ positive</span> "
          "<span style='color:rgb(178,24,43)'>■ negative</span>, stronger = larger "
          "&nbsp;|&nbsp; border: device (grey CPU, green GPU, purple sim), "
          "<span style='color:#D7191C'>red = warning</span> &nbsp;|&nbsp; ⋯ runs after "
          "(control dependency) &nbsp;|&nbsp; ■ large: a collapsed name scope</small>")


class GraphInspector(w.VBox):
    """The graph of ``target`` with values, gradients, a step-by-step walk and live inputs."""

    def __init__(self, target, names=None, session=None, feed_dict=None, title=None,
                 height=None, output=None, args=None, optimized=False, collapsed=(),
                 gradient_nodes=None, **inputs):
        super().__init__()
        self.view = _as_view(target, names, session, feed_dict, title, inputs, output, args,
                             optimized)
        if gradient_nodes is None:
            gradient_nodes = len(self.view.nodes) <= BIG_GRAPH
        self.view.show_gradient_nodes(gradient_nodes).collapse(*collapsed)
        self.selected = None
        self.check = None
        self._height = height
        self._syncing = False             # True while controls are set to match the view
        self.scene = Scene(self.view)
        self.figure = go.FigureWidget(layout=self._layout())
        self._add_traces()
        self._build_controls()
        self.view.listeners.append(lambda view: self._on_update())
        self.view.display_listeners.append(lambda view: self._on_display())
        self._redraw()

    # ------------------------------------------------------------------ building
    def _layout(self):
        return dict(height=self._size()[1], width=self._size()[0],
                    margin=dict(l=10, r=10, t=10, b=10), template="plotly_white",
                    showlegend=False, hovermode="closest", dragmode="pan",
                    xaxis=dict(visible=False), yaxis=dict(visible=False), clickmode="event",
                    font=dict(size=12))

    def _size(self):
        """(width, height) in pixels for the scene: about 110 px a column and a row."""
        xs = [x for x, _ in self.scene.position.values()] or [0]
        ys = [y for _, y in self.scene.position.values()] or [0]
        width = int(min(WIDEST, max(660, 115 * (1 + max(xs) - min(xs)))))
        height = self._height or int(min(760, max(300, 110 * (1 + max(ys) - min(ys)) + 120)))
        return width, height

    def _add_traces(self):
        f = self.figure
        f.add_scatter(mode="lines", hoverinfo="skip", name="control edges",
                      line=dict(color="#B0B0B0", width=1.2, dash="dot"))
        f.add_scatter(mode="lines", hoverinfo="skip", name="edges",
                      line=dict(color="#A0A0A0", width=1.5))
        f.add_scatter(mode="lines", hoverinfo="skip", name="active edges",
                      line=dict(color="#FF8C00", width=5))
        f.add_scatter(mode="markers", hoverinfo="skip", name="arrows")
        f.add_scatter(mode="text", hoverinfo="skip", name="edge labels",
                      textfont=dict(size=10, color="#555"))
        f.add_scatter(mode="markers", hoverinfo="skip", name="rings")
        f.add_scatter(mode="markers+text", hoverinfo="text", name="nodes",
                      textposition="bottom center", cliponaxis=False)
        f.add_scatter(mode="text", hoverinfo="skip", name="gates", textposition="top center",
                      textfont=dict(size=11, color="#6A3D9A"), cliponaxis=False)
        self.nodes = f.data[6]
        self.nodes.on_click(self._on_click)

    def _build_controls(self):
        view = self.view
        steps = len(view.steps())
        self.play = w.Play(min=0, max=steps, value=steps, interval=900, description="play")
        self.step = w.IntSlider(min=0, max=steps, value=steps, description="step",
                                readout=False, continuous_update=True,
                                layout=w.Layout(width="260px"))
        w.jslink((self.play, "value"), (self.step, "value"))
        self.back = w.Button(description="◀", tooltip="previous step",
                             layout=w.Layout(width="40px"))
        self.forward = w.Button(description="▶", tooltip="next step",
                                layout=w.Layout(width="40px"))
        self.back.on_click(lambda _: self._move(-1))
        self.forward.on_click(lambda _: self._move(1))
        self.caption = w.HTML()
        self.colour_by = w.Dropdown(options=["gradient", "value", "device"], value="gradient",
                                    description="colour", layout=w.Layout(width="190px"))
        self.grad_check = w.Checkbox(value=False, description="gradient check", indent=False,
                                     layout=w.Layout(width="140px"))
        self.show_gradients = w.Checkbox(value=view.gradient_nodes_shown,
                                         description="gradient nodes", indent=False,
                                         layout=w.Layout(width="140px"))
        scopes = self._scope_options()
        self.collapse = w.SelectMultiple(options=scopes, value=tuple(sorted(view.collapsed)),
                                         description="collapse",
                                         rows=min(6, max(1, len(scopes))),
                                         layout=w.Layout(width="340px"))
        self.expand_all = w.Button(description="expand all", layout=w.Layout(width="90px"))
        self.expand_all.on_click(lambda _: self.view.expand())
        self.sliders = [self._slider(n) for n in view.leaves
                        if n.kind in ("input", "variable", "placeholder")
                        and n.shape == () and n.dtype.startswith("float")]
        self.detail = w.HTML(layout=w.Layout(width="380px", overflow="auto"))
        self.status = w.HTML()
        for control in (self.step, self.colour_by, self.grad_check):
            control.observe(self._on_control, "value")
        self.collapse.observe(self._on_choice, "value")
        self.show_gradients.observe(self._on_choice, "value")

        row = [self.play, self.back, self.step, self.forward, self.colour_by, self.grad_check]
        if any(n.gradient_node for n in view.nodes):
            row.append(self.show_gradients)
        top = [w.HBox(row), self.caption]
        if view.scopes():
            top.append(w.HBox([self.collapse, self.expand_all]))
        if self.sliders:
            top.append(w.HBox(self.sliders, layout=w.Layout(flex_flow="row wrap")))
        title = [w.HTML(f"<b>{html.escape(view.title)}</b>")] if view.title else []
        self.body = w.HBox([self.figure, self.detail],
                           layout=w.Layout(align_items="flex-start", flex_flow=self._flow()))
        self.children = title + top + [
            self.body,
            w.HTML(LEGEND), self.status]

    def _slider(self, node):
        value = float(node.value)
        low, high, step = _slider_range(value)
        slider = w.FloatSlider(value=value, min=low, max=high, step=step,
                               description=node.label, continuous_update=True,
                               readout_format=".3g", layout=w.Layout(width="300px"))
        slider.observe(lambda change: self._on_slider(node.id, change["new"]), "value")
        slider.node_id = node.id
        return slider

    # ------------------------------------------------------------------ reacting
    def _on_choice(self, _):
        """The collapse list or the gradient-nodes box changed: tell the view (which calls
        ``_on_display`` back)."""
        if not self._syncing:
            self.view.collapsed = set(self.collapse.value)
            self.view.show_gradient_nodes(self.show_gradients.value)

    def _scope_options(self):
        """The scopes listed: those with a node on screen (and the collapsed ones)."""
        return sorted(set(self.view.scopes(shown_only=True)) | self.view.collapsed)

    def _on_display(self):
        """The view's display choices changed (here or in code): controls agree, new scene."""
        view = self.view
        self._syncing = True
        try:
            self.collapse.options = self._scope_options()
            self.collapse.value = tuple(sorted(view.collapsed))
            self.show_gradients.value = view.gradient_nodes_shown
        finally:
            self._syncing = False
        self.scene = Scene(view)
        self._redraw()
        self.body.layout.flex_flow = self._flow()

    def _flow(self):
        """The detail beside a small picture, below a wide one."""
        return "row" if self._size()[0] <= 660 else "row wrap"

    def _move(self, delta):
        self.step.value = min(self.step.max, max(0, self.step.value + delta))

    def _on_control(self, change):
        if change["owner"] is self.grad_check:
            self.check = self.view.gradient_check() if change["new"] else None
        self._redraw()

    def _on_update(self):
        """The leaves have new values (from a slider or from code): every slider shows its
        leaf's value, then the picture is drawn again."""
        self._syncing = True
        try:
            for slider in self.sliders:
                value = float(self.view.node(slider.node_id).value)
                if value != slider.value:
                    _fit_slider(slider, value)
        finally:
            self._syncing = False
        self._redraw()

    def _on_slider(self, node_id, value):
        if self._syncing:
            return
        try:
            self.view.update({node_id: value})       # listeners redraw
            self.status.value = ""
        except (ValueError, ArithmeticError) as error:
            self.status.value = f"<span style='color:#D7191C'>{html.escape(str(error))}</span>"

    def _on_click(self, trace, points, state):
        if points.point_inds:
            self.select(self.scene.shown[points.point_inds[0]])

    def select(self, shown):
        """Show a node's detail (by id or label); a collapsed scope expands instead."""
        if shown.startswith("scope:"):
            self.view.expand(shown[6:])
            return
        self.selected = self.view.node(shown).id
        self._redraw()

    # ------------------------------------------------------------------ drawing
    def _redraw(self):
        if self.check is not None:
            self.check = self.view.gradient_check()      # values may have changed
        step = self.step.value if self.step.value < self.step.max else None
        x_range, y_range = self._ranges()
        frame = self.scene.frame(step=step, selected=self.selected,
                                 colour_by=self.colour_by.value, check=self.check,
                                 aspect=self._aspect(x_range, y_range))
        controls, edges, active, arrows, labels, rings, nodes, gates = self.figure.data
        with self.figure.batch_update():
            controls.x, controls.y = frame["control_x"], frame["control_y"]
            edges.x, edges.y = frame["edge_x"], frame["edge_y"]
            active.x, active.y = frame["active_x"], frame["active_y"]
            arrows.x, arrows.y = frame["arrow_x"], frame["arrow_y"]
            # marker properties one by one (plotly.js refuses an update that sets the whole
            # "marker" of one trace and "marker.color" of another)
            arrows.marker.update(symbol="triangle-right", size=11, angle=frame["arrow_angle"],
                                 color=["#606060"] * len(frame["arrow_angle"]))
            labels.x, labels.y, labels.text = frame["label_x"], frame["label_y"], \
                frame["label_text"]
            rings.x, rings.y = frame["ring_x"], frame["ring_y"]
            rings.marker.update(symbol="circle-open", size=46, line=dict(width=4),
                                color=frame["ring_colour"])   # open markers draw in .color
            nodes.x, nodes.y, nodes.text = frame["node_x"], frame["node_y"], frame["node_text"]
            nodes.hovertext = frame["hover"]
            gates.x, gates.y, gates.text = frame["node_x"], [y + 0.18 for y in
                                                             frame["node_y"]], frame["gate_text"]
            self.figure.layout.xaxis.range, self.figure.layout.yaxis.range = x_range, y_range
            self.figure.layout.width, self.figure.layout.height = self._size()
            nodes.marker.update(symbol=frame["symbol"], size=frame["size"],
                                color=frame["colour"],
                                line=dict(color=frame["line_colour"],
                                          width=frame["line_width"]))
        self.caption.value = f"<b>{html.escape(frame['caption'])}</b>"
        shown = self.selected or frame["active"] or self.view.output
        if shown is not None and not shown.startswith("scope:"):
            self.detail.value = node_detail(self.view, shown, self.check)

    def _ranges(self):
        xs = [x for x, _ in self.scene.position.values()] or [0]
        ys = [y for _, y in self.scene.position.values()] or [0]
        return [min(xs) - 0.6, max(xs) + 0.6], [min(ys) - 0.75, max(ys) + 0.5]

    def _aspect(self, x_range, y_range):
        """Screen pixels per y unit over pixels per x unit (20 px of margins)."""
        return (self.figure.layout.height - 20) / (y_range[1] - y_range[0]) / \
            ((self.figure.layout.width - 20) / (x_range[1] - x_range[0]))

    def __repr__(self):
        """The table of nodes and gradients: what a notebook shows where widgets do not run."""
        return self.view.to_text()


def _fit_slider(slider, value):
    """Show ``value`` on ``slider``, with a new range around it if it lies outside."""
    if not slider.min <= value <= slider.max:
        with slider.hold_trait_notifications():
            slider.min, slider.max, slider.step = _slider_range(value)
    slider.value = value


def _slider_range(value):
    """(min, max, step) around ``value``. The step is a round number (0.01, 0.1...) and the
    ends are multiples of it, so the slider stops on round values such as 2 or 0.5 (a step of
    a hundredth of the range stopped at 1.98 and 0.48)."""
    span = max(2.0, 2 * abs(value))
    step = 10.0 ** math.floor(math.log10(span / 100))
    return (round(math.floor((value - span) / step) * step, 12),
            round(math.ceil((value + span) / step) * step, 12), step)


def _as_view(target, names, session, feed_dict, title, inputs, output, args, optimized):
    """A GraphView from whatever the student has: a view, a tensor, a graph, a function."""
    if isinstance(target, GraphView):
        return target
    traced = hasattr(target, "get_concrete_function") or hasattr(target, "pass_stages")
    if callable(target) and not traced and not isinstance(target, eg.Tensor) and \
            not hasattr(target, "get_operations"):
        if not inputs:
            raise TypeError(f"GraphInspector({target.__name__}, ...) needs the inputs' starting "
                            f"values as keywords, e.g. GraphInspector(f, x=2.0, w=-1.0).")
        tensors = {k: eg.tensor(v, requires_grad=True) for k, v in inputs.items()}
        result = target(**tensors)
        return graph_view(result, names=tensors, title=title or _signature(target, inputs))
    if inputs:
        raise TypeError(f"Keyword inputs {sorted(inputs)} only apply to a Python function; "
                        "for a tensor, name leaves with names={'w': w, ...}; for a traced "
                        "function, pass args=(...).")
    return graph_view(target, names=names, session=session, feed_dict=feed_dict,
                      title=title or "", output=output, args=args, optimized=optimized)


def _signature(fn, inputs):
    return f"{fn.__name__}({', '.join(inputs)})"
