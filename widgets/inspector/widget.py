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
(``edugraph/view/frame.py``). The figure is ONE plotly FigureWidget, in pixels, inside a box
that scrolls when the graph is wider than the notebook (to the node the detail describes, when
that is out of view; a graph a little too wide shrinks to fit instead); its traces are
rewritten in place inside ``figure.batch_update()``, so the browser gets one message per
change.
"""
import html
import math

import ipywidgets as w
import plotly.graph_objects as go

import edugraph as eg
from edugraph.view import GraphView, graph_view

from ..measure import FONT
from ..notebook import FIGURE, ThemeProbe, wrapping
from . import colours
from .detail import node_detail
from .legend import legend
from .scene import GATE_PX, NAME_PX, RULE_PX, SYMBOL_PX, TITLE_PX, WIRE_PX, Scene

BIG_GRAPH = 40                  # more nodes than this: gradient nodes start hidden
MAX_BOXES = 150                 # more boxes than this: a summary by scope and parts
MAX_HEIGHT = 640                # px: a taller picture scrolls inside its box
PICTURE_BASIS_PX = 360          # px: a wide picture's share of a row, the detail beside it
WHOLE_UP_TO_PX = 760            # px: a picture this wide or less is shown whole, the detail
                                # under it if need be (beside it from a notebook ~1100 px wide)
SHORT_PX = 400                  # px: a wider picture this short takes the whole row, so that
                                # more of it shows; the detail under it is still in view
MIN_SCALE = 0.8                 # a picture that takes the whole row shrinks to fit it, down to
                                # this (14 px numbers to 11 px); a wider one scrolls
TEXT_TRACES = {"symbols": SYMBOL_PX, "names": NAME_PX, "gates": GATE_PX, "notes": NAME_PX,
               "titles": TITLE_PX, "values": WIRE_PX, "grads": WIRE_PX, "rules": RULE_PX}
SHADE_LEVELS = range(-4, 5)


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
        self.theme = ThemeProbe()
        self.figure = go.FigureWidget()
        self._styled = None               # the (theme, scale) the traces were styled for
        self._written = {}                # (trace, property) → the value last written
        self._add_traces()
        frame = self.view.frame()
        self._build_controls(frame)
        self.scene = Scene(frame)
        self.view.listeners.append(lambda view: self._redraw())
        self.view.display_listeners.append(lambda view: self._redraw(new_scene=True))
        self.theme.observe(lambda change: self._redraw(), "dark")
        self.theme.observe(self._on_width, "width")
        self._redraw(frame=frame)       # (the controls ask for this frame: the result)

    # ------------------------------------------------------------------ building
    def _add_traces(self):
        """The traces, bottom to top; ``_style`` sets how they look (in every redraw: plotly
        drops the styles of traces added before the figure is on the page)."""
        names = ["boxes", "casing"] + [f"wires {level}" for level in SHADE_LEVELS] + [
            "wires without gradient", "group wires", "control edges", "active wires",
            "arrows", "rings", "nodes"] + list(TEXT_TRACES)
        for name in names:
            self.figure.add_scatter(name=name, hoverinfo="text" if name == "nodes" else "skip")
        self.traces = {t.name: t for t in self.figure.data}
        self.nodes = self.traces["nodes"]
        self.nodes.on_click(self._on_click)

    def _style(self, theme, scale):
        ink, t = colours.THEMES[theme], self.traces
        t["arrows"].marker.update(symbol="triangle-right", size=11 * scale)
        t["rings"].marker.update(symbol="circle-open", line=dict(width=4 * scale))
        # (no plotly template: every colour is set here, and a template is slow to set)
        self.figure.update_layout({k: v for k, v in FIGURE[theme].items() if k != "template"})
        self.figure.update_layout(
            hoverlabel=dict(bgcolor=ink["box"], font=dict(color=ink["text"], family=FONT)),
            margin=dict(l=0, r=0, t=0, b=0), showlegend=False, hovermode="closest",
            dragmode=False, clickmode="event", font=dict(family=FONT, size=12),
            xaxis=dict(visible=False, fixedrange=True, autorange=False),
            yaxis=dict(visible=False, fixedrange=True, autorange=False))
        t["boxes"].update(mode="lines", fill="toself", fillcolor=ink["box"],
                          line=dict(color=ink["box_line"], width=1.5 * scale))
        for level in SHADE_LEVELS:
            t[f"wires {level}"].update(mode="lines", line=dict(
                color=colours.SHADES[level + 4], width=3 * scale))
        lines = {"casing": (ink["casing"], 6, "solid"),
                 "wires without gradient": (ink["wire"], 1.8, "solid"),
                 "group wires": (ink["wire"], 1.5, "solid"),
                 "control edges": (ink["wire"], 1.2, "dot"),
                 "active wires": (ink["active"], 9, "solid")}
        for name, (colour, width, dash) in lines.items():
            t[name].update(mode="lines", line=dict(color=colour, width=width * scale,
                                                   dash=dash))
        t["active wires"].opacity = 0.55
        t["arrows"].mode = t["rings"].mode = t["nodes"].mode = "markers"
        words = {"symbols": None, "names": ink["text"], "gates": ink["gate"],
                 "notes": ink["muted"], "titles": ink["text"], "values": ink["value"],
                 "grads": ink["grad"], "rules": ink["rule"]}
        for name, px in TEXT_TRACES.items():
            t[name].update(mode="text", cliponaxis=False, textposition="middle center")
            t[name].textfont.family = FONT
            if name != "symbols":           # (each sign has its own size, set per frame)
                t[name].textfont.size = px * scale
            if words[name] is not None:
                t[name].textfont.color = words[name]

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
        # The picture scrolls in its own box; the detail sits beside it while both fit,
        # under it when the notebook is narrow.
        self.picture = w.Box([self.figure], layout=w.Layout(
            flex=f"1 1 {PICTURE_BASIS_PX}px", overflow="auto", max_height=f"{self._max_height}px"))
        self.body = w.HBox([self.picture, self.detail], layout=w.Layout(
            flex_flow="row wrap", align_items="flex-start", width="100%"))
        self.children = title + top + [self.body, self.legend, self.status, self.theme]
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

    def _on_width(self, _):
        """The notebook's width changed: redraw if the picture now shrinks otherwise."""
        if self._styled and self._styled[1] != self._scale():
            self._redraw()

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

    def _on_click(self, trace, points, state):
        if points.point_inds:
            self.select(self.scene.ids[points.point_inds[0]])

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
        theme, scale = self.theme.name, self._scale()
        drawn = self.scene.draw(frame, theme, self.selected)
        with self.figure.batch_update():
            if self._styled != (theme, scale):     # (only when one of them changes)
                self._styled = theme, scale
                self._style(theme, scale)
            self._draw_frame(drawn, scale)
            # (the axes stay in the scene's pixels: plotly shrinks the positions)
            self.figure.update_layout(
                width=round(self.scene.width * scale), height=round(self.scene.height * scale),
                xaxis_range=[0, self.scene.width], yaxis_range=[self.scene.height, 0])
        # as wide as the picture at most: a small graph keeps the detail right beside it;
        # and a small graph asks for all of its width, so where the detail does not fit
        # beside it, it goes under the picture rather than cutting the picture's right side
        # (the output) off. So does a wide but short one (a layer's training graph, an
        # unrolled loop), which then scrolls across the whole row; a wide and tall graph
        # scrolls in its box with the detail beside it, where a click's detail stays in view.
        width = round(self.scene.width * scale) + 2
        self.picture.layout.max_width = f"{width}px"
        basis = width if self._whole_row() else PICTURE_BASIS_PX
        self.picture.layout.flex = f"1 1 {basis}px"
        self.theme.keep_in_view = self._shown_x(frame, scale)
        self.caption.value = f"<b>{html.escape(frame.caption)}</b>"
        self.legend.value = legend(frame, theme)
        self.detail.value = node_detail(frame.detail, frame.scales)
        self.summary_note.value = f"<div style='color:var(--jp-ui-font-color2, #616161)'>" \
                                  f"{html.escape(frame.summary)}</div>"
        self.summary_row.layout.display = "flex" if frame.summary else "none"
        self.back_to_summary.layout.display = "" if frame.parts_opened else "none"
        self.scope_row.layout.display = "flex" if self.collapse.options else "none"

    def _whole_row(self):
        return self.scene.width + 2 <= WHOLE_UP_TO_PX or self.scene.height <= SHORT_PX

    def _scale(self):
        """How much the picture shrinks: to the output area's width (``theme.width``, which
        the browser reports) where it takes the whole row and fits at MIN_SCALE or more (lesson
        10's graph was 85 px too wide); else not at all (it scrolls)."""
        room = self.theme.width - 4     # (the box is 2 px wider than the picture; 2 spare)
        if room <= 0 or self.scene.width <= room or not self._whole_row():
            return 1.0
        return room / self.scene.width if room / self.scene.width >= MIN_SCALE else 1.0

    def _shown_x(self, frame, scale):
        """Where (px from the picture's left) the node the detail describes is, or the box of
        this step's node: a picture wider than the notebook scrolls to it (lesson 3's loss
        sat off-screen, at the right end, while the detail described it)."""
        for box in (frame.detail and frame.detail.id, frame.active):
            if box in self.scene.position:
                return self.scene.position[box][0] * scale
        return -1

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

    def _draw_frame(self, drawn, scale):
        """Write the drawn arrays into the traces: only those that changed (a slider often
        changes a few numbers, and plotly checks every array it is given); sizes in pixels
        times ``scale``."""
        props = {("boxes", "x"): drawn["boxes_x"], ("boxes", "y"): drawn["boxes_y"]}
        lines = drawn["lines"]
        for level in SHADE_LEVELS:
            props[f"wires {level}", "x"], props[f"wires {level}", "y"] = \
                lines[level]["x"], lines[level]["y"]
        for name, key in (("casing", "casing"), ("wires without gradient", "none"),
                          ("group wires", "group"), ("control edges", "control"),
                          ("active wires", "active")):
            props[name, "x"], props[name, "y"] = lines[key]["x"], lines[key]["y"]
        arrows, rings, nodes = drawn["arrows"], drawn["rings"], drawn["nodes"]
        props.update({("arrows", "x"): arrows["x"], ("arrows", "y"): arrows["y"],
                      ("arrows", "marker.angle"): arrows["angle"],
                      ("arrows", "marker.color"): arrows["colour"],
                      ("rings", "x"): rings["x"], ("rings", "y"): rings["y"],
                      ("rings", "marker.size"): _times(rings["size"], scale),
                      ("rings", "marker.color"): rings["colour"],
                      ("nodes", "x"): nodes["x"], ("nodes", "y"): nodes["y"],
                      ("nodes", "text"): nodes["text"], ("nodes", "hovertext"): nodes["hover"],
                      ("nodes", "customdata"): nodes["ids"],
                      ("nodes", "marker.symbol"): nodes["symbol"],
                      ("nodes", "marker.size"): _times(nodes["size"], scale),
                      ("nodes", "marker.color"): nodes["colour"],
                      ("nodes", "marker.opacity"): nodes["opacity"],
                      ("nodes", "marker.line.color"): nodes["line_colour"],
                      ("nodes", "marker.line.width"): _times(nodes["line_width"], scale),
                      ("symbols", "textfont.color"): drawn["texts"]["symbols"]["colour"],
                      ("symbols", "textfont.size"):
                          _times(drawn["texts"]["symbols"]["size"], scale)})
        for name in TEXT_TRACES:
            texts = drawn["texts"].get(name, {"x": [], "y": [], "text": []})
            for key in ("x", "y", "text"):
                props[name, key] = texts[key]
        for (name, path), value in props.items():
            if self._written.get((name, path)) != value:
                self._written[name, path] = value
                self.traces[name][path] = value

    def __repr__(self):
        """The table of nodes and gradients: what a notebook shows where widgets do not run."""
        return self.view.to_text()


def _times(sizes, scale):
    return [size * scale for size in sizes]


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
