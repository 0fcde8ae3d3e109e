"""GraphInspector: see a computation's graph, its values and its gradients, step by step.

    >>> GraphInspector(loss)                                # an eager result
    >>> GraphInspector(f, x=2.0, w=-1.0, b=3.0)             # a function of scalar inputs
    >>> GraphInspector(loss, session=sess, feed_dict={...})  # a static graph
    >>> GraphInspector(graph, session=sess, feed_dict={...}, output=loss)   # all of it
    >>> GraphInspector(f, args=(x, w, b), optimized=True)   # an eg.function, after its passes

The picture is the lecture's circuit: each wire carries its value above it and its gradient
below it, each op's circle holds its sign, and during a backward step the wires being filled
show their rule. Name scopes can be collapsed to one box each (the "collapse" list, or a click
on a box to open it); the gradient nodes that ``eg.gradients`` or an optimizer added can be
hidden (the "gradient nodes" box; hidden at first in graphs of more than 40 nodes) and are
drawn below the forward graph. A graph of more than 150 boxes is shown as a summary (its
top-level scopes, then parts of it), which opens part by part.

The widget only lays out and draws: every word and number comes from ``view.frame(step)``
(``edugraph/view/frame.py``). The picture is a ``Picture`` (``widgets/picture.py``) whose
synced state is the SVG of the current frame, so every view draws it — a second
``display(inspector)``, a reopened notebook, a late first view. A graph wider than the notebook
shrinks to fit (its numbers down to 10 px), or shows whole as an overview with the node the
detail describes marked, which zooms to full size.
"""
import html
import math

import ipywidgets as w

import edugraph as eg
from edugraph.view import GraphView, graph_view

from ..notebook import wrapping
from ..picture import Picture
from . import colours
from .detail import node_detail
from .legend import legend
from .scene import Scene

BIG_GRAPH = 40                  # more nodes than this: gradient nodes start hidden
MAX_BOXES = 150                 # more boxes than this: a summary by scope and parts
MAX_HEIGHT = 640                # px: a taller picture shrinks to it, or scrolls when zoomed


class GraphInspector(w.VBox):
    """The graph of ``target`` with values, gradients, a step-by-step walk and live inputs."""

    def __init__(self, target, names=None, session=None, feed_dict=None, title=None,
                 height=None, output=None, args=None, optimized=False, collapsed=(),
                 gradient_nodes=None, summary=None, **inputs):
        """``height``: the most pixels the picture takes before it scrolls (default 640);
        ``collapsed``: name scopes drawn as one box; ``gradient_nodes``: show the nodes
        ``eg.gradients`` added (default: in graphs of at most 40 nodes); ``summary``: the
        most boxes drawn before the graph is summarised (None: 150, False: never)."""
        super().__init__()
        self.view = _as_view(target, names, session, feed_dict, title, inputs, output, args,
                             optimized)
        if gradient_nodes is None:
            gradient_nodes = len(self.view.nodes) <= BIG_GRAPH
        self.view.show_gradient_nodes(gradient_nodes).collapse(*collapsed)
        if summary is not False:
            self.view.summarise(MAX_BOXES if summary is None else summary)
        self.selected = None
        self.check = None
        self._max_height = height or MAX_HEIGHT
        self._syncing = False             # True while controls are set to match the view
        self.picture = Picture(max_height=self._max_height,
                               layout=w.Layout(min_width="0", overflow="hidden"))
        self.picture.on_click(self.select)
        frame = self.view.frame()
        self._build_controls(frame)
        self.scene = Scene(frame)
        self.view.listeners.append(lambda view: self._redraw())
        self.view.display_listeners.append(lambda view: self._redraw(new_scene=True))
        self.picture.observe(lambda change: self._redraw(), "dark")
        self._redraw(frame=frame)       # (the controls ask for this frame: the result)

    # ------------------------------------------------------------------ building
    def _build_controls(self, frame):
        """The controls, showing the state of ``frame`` (``_show_state`` keeps them so)."""
        steps = frame.steps
        self.play = w.Play(min=0, max=steps, value=steps, interval=900, description="play")
        self.step = w.IntSlider(min=0, max=steps, value=steps, description="step",
                                readout=False, continuous_update=True,
                                layout=w.Layout(width="240px"))
        w.jslink((self.play, "value"), (self.step, "value"))
        self.back = w.Button(description="◀", tooltip="previous step",
                             layout=w.Layout(width="40px"))
        self.forward = w.Button(description="▶", tooltip="next step",
                                layout=w.Layout(width="40px"))
        self.back.on_click(lambda _: self._move(-1))
        self.forward.on_click(lambda _: self._move(1))
        self.caption = w.HTML(layout=w.Layout(min_height="24px"))
        self.colour_by = w.Dropdown(options=["gradient", "value", "device"], value="gradient",
                                    description="colour", layout=w.Layout(width="190px"))
        self.grad_check = w.Checkbox(value=False, description="gradient check", indent=False,
                                     layout=w.Layout(width="130px"))
        self.show_gradients = w.Checkbox(value=frame.gradient_nodes_shown,
                                         description="gradient nodes", indent=False,
                                         layout=w.Layout(width="130px"))
        self.collapse = w.SelectMultiple(options=frame.scopes, value=tuple(frame.collapsed),
                                         description="collapse",
                                         rows=min(6, max(1, len(frame.scopes))),
                                         layout=w.Layout(width="340px"))
        self.expand_all = w.Button(description="expand all", layout=w.Layout(width="90px"))
        self.expand_all.on_click(lambda _: self.view.expand(*self.collapse.options))
        self.summary_note = w.HTML()
        self.back_to_summary = w.Button(description="back to the summary",
                                        layout=w.Layout(width="170px"))
        self.back_to_summary.on_click(lambda _: self.view.close_parts())
        self.sliders = [self._slider(leaf) for leaf in frame.inputs]
        self.detail = w.HTML(layout=w.Layout(flex="0 1 340px", min_width="300px",
                                             overflow="auto"))
        self.legend = w.HTML()
        self.status = w.HTML()
        for control in (self.step, self.colour_by, self.grad_check):
            control.observe(self._on_control, "value")
        self.collapse.observe(self._on_choice, "value")
        self.show_gradients.observe(self._on_choice, "value")

        row = [self.play, self.back, self.step, self.forward, self.colour_by, self.grad_check]
        if frame.gradient_nodes:
            row.append(self.show_gradients)
        top = [w.HBox(row, layout=wrapping()), self.caption]
        self.scope_row = w.HBox([self.collapse, self.expand_all], layout=wrapping())
        top.append(self.scope_row)          # (hidden while no scope is offered)
        self.summary_row = w.HBox([self.summary_note, self.back_to_summary],
                                  layout=wrapping())
        top.append(self.summary_row)
        if self.sliders:
            top.append(w.HBox(self.sliders, layout=wrapping()))
        title = [w.HTML(f"<b>{html.escape(frame.title)}</b>")] if frame.title else []
        # The detail sits beside the picture while both fit, under it when the notebook is
        # narrow.
        self.body = w.HBox([self.picture, self.detail], layout=w.Layout(
            flex_flow="row wrap", align_items="flex-start", width="100%"))
        self.children = title + top + [self.body, self.legend, self.status]
        self.layout.width = "100%"

    def _slider(self, leaf):
        low, high, step = _slider_range(leaf.value)
        slider = w.FloatSlider(value=leaf.value, min=low, max=high, step=step,
                               description=leaf.label, continuous_update=True,
                               readout_format=".3g", layout=w.Layout(width="290px"))
        slider.observe(lambda change: self._on_slider(leaf.id, change["new"]), "value")
        slider.node_id = leaf.id
        return slider

    # ------------------------------------------------------------------ reacting
    def _on_choice(self, _):
        """The collapse list or the gradient-nodes box changed: tell the view (which calls
        ``_redraw`` back). Scopes not in the list keep their state."""
        if not self._syncing:
            self.view.set_display(self.collapse.value, self.show_gradients.value)

    def _move(self, delta):
        self.step.value = min(self.step.max, max(0, self.step.value + delta))

    def _on_control(self, change):
        if change["owner"] is self.grad_check:
            self.check = self.view.gradient_check() if change["new"] else None
        self._redraw()

    def _on_slider(self, node_id, value):
        if self._syncing:
            return
        try:
            self.view.update({node_id: value})       # listeners redraw
            self.status.value = ""
        except (ValueError, ArithmeticError) as error:
            self.status.value = f"<span style='color:{colours.WARNING}'>" \
                                f"{html.escape(str(error))}</span>"

    def select(self, shown):
        """Show a node's detail (by id or label); a collapsed scope or part opens instead."""
        if shown.startswith("scope:"):
            self.view.expand(shown[6:])
            return
        if shown.startswith("part:"):
            self.view.open_part(shown)
            return
        self.selected = self.view.node(shown).id
        self._redraw()

    # ------------------------------------------------------------------ drawing
    def _redraw(self, new_scene=False, frame=None):
        """Draw the frame of the current step, and let every control show its state: the
        view changed (new values, other boxes; here or in code) or a control moved.
        ``new_scene``: other boxes are shown, lay them out again; ``frame``: the frame the
        controls ask for, if it is already made."""
        if frame is None:
            if self.check is not None:
                self.check = self.view.gradient_check()      # values may have changed
            step = self.step.value if self.step.value < self.step.max else None
            frame = self.view.frame(step=step, colour_by=self.colour_by.value,
                                    focus=self.selected, check=self.check)
        self._show_state(frame)
        if new_scene or not self.scene.fits(frame):
            self.scene = Scene(frame)
        theme = self.picture.theme
        self.picture.svg = self.scene.svg(frame, theme, self.selected)
        self.picture.focus = self._shown_point(frame)
        # The picture asks for its whole width and is never wider: where the detail does not
        # fit beside it, the detail goes under it, and a picture wider than the row shrinks
        # to fit it (the browser's side of ``Picture``), so the whole graph is in view.
        width = self.scene.width + 2
        self.picture.layout.max_width = f"{width}px"
        self.picture.layout.flex = f"1 1 {width}px"
        self.caption.value = f"<b>{html.escape(frame.caption)}</b>"
        self.legend.value = legend(frame, theme)
        self.detail.value = node_detail(frame.detail, frame.scales)
        self.summary_note.value = f"<div style='color:var(--jp-ui-font-color2, #616161)'>" \
                                  f"{html.escape(frame.summary)}</div>"
        self.summary_row.layout.display = "flex" if frame.summary else "none"
        self.back_to_summary.layout.display = "" if frame.parts_opened else "none"
        self.scope_row.layout.display = "flex" if self.collapse.options else "none"

    def _shown_point(self, frame):
        """Where (px, in the picture) the node the detail describes is, or the box of this
        step's node: marked on an overview, and in view when zoomed (lesson 3's loss sat
        off-screen, at the right end, while the detail described it)."""
        for box in (frame.detail and frame.detail.id, frame.active):
            if box in self.scene.position:
                return tuple(float(c) for c in self.scene.position[box])
        return (-1.0, -1.0)

    def _show_state(self, frame):
        """Every control shows what ``frame`` draws (setting one does not act on the view)."""
        self._syncing = True
        try:
            for slider, leaf in zip(self.sliders, frame.inputs):
                if leaf.value != slider.value:
                    _fit_slider(slider, leaf.value)
            if tuple(self.collapse.options) != tuple(frame.scopes):
                self.collapse.value = ()
                self.collapse.options = frame.scopes
            self.collapse.value = tuple(frame.collapsed)
            self.show_gradients.value = frame.gradient_nodes_shown
        finally:
            self._syncing = False

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
