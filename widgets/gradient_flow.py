"""GradientFlow: each layer's gradient, drawn live while a network trains.

    >>> net.fit(x, y, epochs=5, callbacks=[GradientFlow()])          # Keras
    >>> flow = GradientFlow(net)                                       # PyTorch style
    >>> loss.backward(); flow.step(); optimizer.step()
    >>> flow = GradientFlow(opt.compute_gradients(loss), session=sess)  # TF1 style
    >>> flow.step(feed_dict); sess.run(train_op, feed_dict)

Every ``every`` steps it reads each trainable layer's gradients (or each parameter's, with
``by="parameter"``) and records, per layer, in ``flow.history`` (plain numbers, one per sampled
step, in ``flow.steps``):

* ``grad_norm``: the length of the layer's gradient, $\\lVert g \\rVert_2$ over all its
  weights (a vanishing gradient fades from the output towards the input);
* ``p10``, ``p50``, ``p90``: percentiles of the entries' sizes $|g_i|$, over the entries
  that are not 0 (TensorBoard's distribution bands; a dead ReLU's zeros are counted in
  ``dead``, and a log scale has no 0);
* ``update_ratio``: $\\lVert \\Delta w \\rVert / \\lVert w \\rVert$, how far the step moved the
  weights (CS231n's rule of thumb: about $10^{-3}$; much larger, the learning rate is too
  large; much smaller, too small);
* ``dead``: the share of the layer's units whose incoming weights got exactly zero gradient:
  a ReLU that no example of the batch switched on (a dead unit learns nothing); None for a
  layer without a weight matrix;
* ``nonfinite``: how many gradient entries are NaN or infinite.

The picture (a ``Picture``: its synced state is the SVG, so a second view or a reloaded page
draws it too) has a panel per quantity, layers coloured from blue (input) to red (output), and
one line under it says what it sees, in the lecture's words ("the gradient reaching layer 1 is
10⁻⁶ of the one at layer 10: it vanishes"). Like ``TrainingPlot`` it redraws at most every
``REDRAW_S`` seconds, and a saved notebook keeps the final picture as an image and its text
summary (``text()``) as an output of its own, which nbval compares.

What a sample costs: the gradients are those the step computed anyway (``fit``:
``Model.train_step`` keeps them in ``last_gradients``; PyTorch style: the parameters'
``.grad``), so a sample adds a few numpy reductions and, for the update ratio, a copy of the
weights. TF1 style is the exception: its ``step`` runs the gradients once more in the session,
on the batch it is given. ``bench/bench_gradient_flow.py`` measures the overhead on lesson 6's
digits MLP: with the default ``every=EVERY`` it is within 10 %.

``step()`` is called after the gradients are computed and before the update (PyTorch:
between ``backward()`` and ``optimizer.step()``), so a sampled step's update ratio is known
at the next call, and ``end()`` draws the final picture and shows the summary.
"""
import math
import time

import ipywidgets as w
import numpy as np

from edugraph.models.callbacks import Callback, in_notebook

from .chart import Panel, Series, chart
from .picture import Picture
from .training import REDRAW_S

EVERY = 5                 # steps between two samples (the overhead: bench_gradient_flow.py)
WIDTH = 520               # px
STATS = ("grad_norm", "p10", "p50", "p90", "update_ratio", "dead", "nonfinite")
RULE_OF_THUMB = 1e-3      # CS231n: updates about a thousandth of the weights
INPUT, OUTPUT = (33, 102, 172), (202, 24, 43)      # the first and the last layer's colours
LIVE = "GradientFlow: the gradients are drawn live; the summary follows when training ends"


def layer_colour(index, count):
    """The colour of layer ``index`` of ``count``: blue at the input, red at the output."""
    t = index / max(count - 1, 1)
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(INPUT, OUTPUT))


def power_of_ten(value):
    """10⁻⁶ for 1.3e-6: the order of magnitude, as the lecture writes it."""
    exponent = math.floor(math.log10(value) + 0.5)
    digits = str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"10{digits}"


def layer_statistics(grads, weights_before=None, weights_after=None, unit_axis=-1):
    """The statistics of one layer from its gradients (numpy arrays, one per variable), and,
    for the update ratio, its weights before and after the step (None: not known)."""
    sizes = np.abs(np.concatenate([np.ravel(g) for g in grads]).astype(np.float64))
    finite = np.isfinite(sizes)
    kept = sizes[finite & (sizes > 0)]
    p10, p50, p90 = np.percentile(kept, (10, 50, 90)) if kept.size else (math.nan,) * 3
    stats = {"grad_norm": math.sqrt(float(np.dot(sizes, sizes))) if finite.all() else math.inf,
             "p10": float(p10), "p50": float(p50), "p90": float(p90),
             "nonfinite": int(sizes.size - np.count_nonzero(finite)), "dead": None, "update_ratio": None}
    kernel = next((g for g in grads if np.ndim(g) >= 2), None)
    if kernel is not None:          # a unit is a slice along unit_axis: all of it zero, dead
        moved = np.moveaxis(np.abs(kernel), unit_axis, 0).reshape(kernel.shape[unit_axis], -1)
        stats["dead"] = float(np.mean(moved.max(axis=1) == 0))
    if weights_before is not None and weights_after is not None:
        stats["update_ratio"] = update_ratio(weights_before, weights_after)
    return stats


def update_ratio(weights_before, weights_after):
    """‖Δw‖ / ‖w‖ of one layer (its variables' values before and after the step), None for
    weights that are all zero."""
    before = np.concatenate([np.ravel(v) for v in weights_before]).astype(np.float64)
    after = np.concatenate([np.ravel(v) for v in weights_after]).astype(np.float64)
    size = np.linalg.norm(before)
    return float(np.linalg.norm(after - before) / size) if size else None


def _numpy(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def _group_name(name):
    """A variable's layer: "dense_1/kernel:0" -> "dense_1", "lstm.weight_ih_l0" -> "lstm"."""
    name = name.split(":")[0]
    for separator in ("/", "."):
        if separator in name:
            return name.rsplit(separator, 1)[0]
    return name


class GradientFlow(Callback):
    """Per-layer gradient statistics, live: a ``fit`` callback, or ``step()`` in a loop.

    ``source``: nothing (a ``fit`` callback: the model is ``fit``'s), a model or module whose
    parameters' ``.grad`` ``step()`` reads (PyTorch style), or the (gradient, variable)
    pairs of ``compute_gradients`` with ``session=`` (TF1 style). ``every``: sample every
    k-th step (the first step always); ``by``: "layer" or "parameter"; ``display``: show the
    widget when training starts (default: in a notebook); ``title``: above the panels.
    """

    def __init__(self, source=None, session=None, every=EVERY, by="layer", display=None,
                 title=None):
        if not (isinstance(every, int) and every >= 1):
            raise ValueError(f"GradientFlow: every must be a whole number of steps ≥ 1 (sample "
                             f"every k-th step), got {every!r}.")
        if by not in ("layer", "parameter"):
            raise ValueError(f"GradientFlow: by must be 'layer' or 'parameter', got {by!r}.")
        self.every, self.by, self.title, self.session = every, by, title, session
        self.display = in_notebook() if display is None else display
        self._pairs = None
        if isinstance(source, (list, tuple)):
            self._pairs = [(g, v) for g, v in source if g is not None]
            if session is None:
                raise ValueError("GradientFlow: the (gradient, variable) pairs of "
                                 "compute_gradients are graph tensors; pass the session that "
                                 "runs them: GradientFlow(grads_and_vars, session=sess).")
        elif source is not None:
            self.model = source
        self.picture = Picture(min_scale=0.0)
        self.progress, self.verdict, self.summary = w.HTML(), w.HTML(), w.HTML()
        self.picture.observe(lambda change: self._draw(), "dark")
        self.widget = w.VBox([self.progress, self.picture, self.verdict, self.summary])
        self._reset()

    def _reset(self):
        self.layers, self.steps, self.history = [], [], {k: {} for k in STATS}
        self.relu_layers = set()
        self.step_count = 0
        self._before = None         # the weights before a sampled step's update
        self._shown = self._summary_below = False
        self._drawn_at = -math.inf

    # ------------------------------------------------------------------ the three styles
    def on_train_begin(self, logs=None):
        self._reset()
        self._show()

    def on_train_batch_begin(self, batch, logs=None):
        if self.step_count % self.every == 0:
            self._before = {name: [np.array(_numpy(v), copy=True) for v in variables]
                            for name, variables in self._groups(self.model.trainable_variables)}

    def on_train_batch_end(self, batch, logs=None):
        pairs = getattr(self.model, "last_gradients", None)
        if self._before is not None:
            if pairs is None:
                raise RuntimeError("GradientFlow reads the gradients Model.train_step keeps in "
                                   "model.last_gradients, and this model's fit left none (a "
                                   "distribute strategy's step does not keep them): train "
                                   "without the strategy, or call flow.step() in your loop.")
            before, self._before = self._before, None
            self._record([(_numpy(g), v) for g, v in pairs if g is not None], before,
                         unit_axis=-1)
        self.step_count += 1

    def step(self, feed_dict=None):
        """Call after the gradients are computed and before the update: samples every
        ``every``-th call, and completes the previous sample's update ratio."""
        if self._pairs is None and getattr(self.model, "named_parameters", None) is None:
            raise TypeError("GradientFlow.step() reads a model's parameters (PyTorch style: "
                            "GradientFlow(net)) or compute_gradients' pairs with a session "
                            "(TF1 style); in fit, pass GradientFlow() in callbacks instead.")
        if not self._shown:
            self._show()
        if self._before is not None:             # the last sample's step has been applied
            self._complete_update_ratios(self._before)
            self._before = None
        if self.step_count % self.every == 0:
            if self._pairs is not None:
                grads, values = self.session.run([[g for g, _ in self._pairs],
                                                  [v for _, v in self._pairs]],
                                                 feed_dict=feed_dict)
                pairs = [(np.asarray(g), _Named(v.name, np.asarray(value)))
                         for (_, v), g, value in zip(self._pairs, grads, values)]
                unit_axis = -1
            else:
                pairs = [(_numpy(p.grad), _Named(name, _numpy(p)))
                         for name, p in self.model.named_parameters() if p.grad is not None]
                unit_axis = 0                   # PyTorch's weights are (out, in): units first
            if not pairs:
                raise ValueError("GradientFlow.step(): no parameter has a gradient yet; call "
                                 "it after loss.backward() and before optimizer.step().")
            self._record([(g, v) for g, v in pairs], None, unit_axis)
            self._before = {name: [np.array(v.value, copy=True) for v in variables]
                            for name, variables in self._groups([v for _, v in pairs])}
        self.step_count += 1

    def _complete_update_ratios(self, before):
        if self._pairs is not None:
            now = self.session.run([v for _, v in self._pairs])
            after = [_Named(v.name, value) for (_, v), value in zip(self._pairs, now)]
        else:
            after = [_Named(name, _numpy(p)) for name, p in self.model.named_parameters()]
        after = dict(self._groups(after))
        for name, weights in before.items():
            self.history["update_ratio"][name][-1] = \
                update_ratio(weights, [v.value for v in after[name]])

    def on_train_end(self, logs=None):
        if self._before is not None:         # (step style: the last sample's update)
            self._complete_update_ratios(self._before)
            self._before = None
        if self.display:
            from IPython.display import display
            self._summary_below = True
            display({"text/plain": self.text()}, raw=True)
        self._draw()

    end = on_train_end          # (PyTorch and TF1 style: after the loop)

    # ------------------------------------------------------------------ recording
    def _groups(self, variables):
        """[(layer name, [variables])] in the model's order, input to output."""
        groups = {}
        for v in variables:
            name = _name_of(v) if self.by == "parameter" else self._layer_of(v)
            groups.setdefault(name, []).append(v)
        return list(groups.items())

    def _layer_of(self, variable):
        if not isinstance(variable, _Named) and hasattr(self.model, "layers"):
            for layer in self.model.layers:
                if any(variable is v for v in getattr(layer, "trainable_weights", [])):
                    if "relu" in getattr(getattr(layer, "activation", None), "__name__", ""):
                        self.relu_layers.add(layer.name)
                    return layer.name
        return _group_name(_name_of(variable))

    def _record(self, pairs, before, unit_axis):
        groups = self._groups([v for _, v in pairs])
        grads = {id(v): g for g, v in pairs}
        self.steps.append(self.step_count + 1)
        for name, variables in groups:
            if name not in self.layers:
                self.layers.append(name)
                for key in STATS:         # (a layer seen late: None at the earlier samples)
                    self.history[key][name] = [None] * (len(self.steps) - 1)
            after = [_numpy(v) for v in variables] if before is not None else None
            stats = layer_statistics([grads[id(v)] for v in variables],
                                     before.get(name) if before else None, after, unit_axis)
            for key in STATS:
                self.history[key][name].append(stats[key])
        for name in self.layers:          # (a layer without a gradient this time)
            for key in STATS:
                if len(self.history[key][name]) < len(self.steps):
                    self.history[key][name].append(None)
        if len(self.steps) == 1 or time.monotonic() - self._drawn_at >= REDRAW_S:
            self._draw()

    # ------------------------------------------------------------------ what it sees
    def latest(self, key):
        """{layer: the last sampled value of ``key``} (layers without one left out)."""
        return {name: values[-1] for name, values in self.history[key].items()
                if values and values[-1] is not None}

    def findings(self):
        """What the statistics show, in the lecture's words: a list of short sentences."""
        if not self.steps:
            return []
        said, numbered = [], {name: i + 1 for i, name in enumerate(self.layers)}
        broken = [name for name, count in self.latest("nonfinite").items() if count]
        if broken:
            said.append(f"layer {numbered[broken[0]]}'s gradient holds NaN or inf: the step "
                        "overflowed (lower the learning rate, or clip the gradients)")
        norms = {n: v for n, v in self.latest("grad_norm").items() if 0 < v < math.inf}
        if len(norms) >= 2:
            first, last = self.layers.index(min(norms, key=self.layers.index)), \
                self.layers.index(max(norms, key=self.layers.index))
            ratio = norms[self.layers[first]] / norms[self.layers[last]]
            if ratio < 1e-2:
                said.append(f"the gradient reaching layer {first + 1} is {power_of_ten(ratio)} "
                            f"of the one at layer {last + 1}: it vanishes")
            elif ratio > 1e2:
                said.append(f"the gradient at layer {first + 1} is {power_of_ten(ratio)} times "
                            f"the one at layer {last + 1}: it explodes towards the input")
        totals = self.global_norms()
        if len(totals) >= 5:
            peak = max(range(len(totals)), key=totals.__getitem__)
            typical = float(np.median(totals))
            if typical > 0 and totals[peak] > 10 * typical:
                said.append(f"the gradient's norm spiked to {totals[peak]:.3g} at step "
                            f"{self.steps[peak]}, {totals[peak] / typical:.0f}× its median: "
                            "it explodes (clipping by the global norm caps such steps)")
        dead = self.latest("dead")
        worst = max(dead, key=dead.get, default=None)
        if worst is not None and dead[worst] >= 0.1:
            said.append(f"{dead[worst]:.0%} of layer {numbered[worst]}'s units are dead"
                        .replace("%", " %"))
        ratios = [v for v in self.latest("update_ratio").values() if v]
        if ratios:
            typical = float(np.median(ratios))
            if typical > 30 * RULE_OF_THUMB:
                said.append(f"the updates are {power_of_ten(typical)} of the weights (rule of "
                            "thumb: 10⁻³): the learning rate looks too large")
            elif typical < RULE_OF_THUMB / 100:
                said.append(f"the updates are {power_of_ten(typical)} of the weights (rule of "
                            "thumb: 10⁻³): the learning rate looks too small")
        if not said and len(norms) >= 2:
            said.append(f"the gradient reaches every layer at a similar size (layer "
                        f"{first + 1} gets {ratio:.2g}× what layer {last + 1} gets)")
        return said

    def global_norms(self):
        """The norm of all the layers' gradients together, at each sampled step."""
        return [math.sqrt(sum(values[i] ** 2 for values in self.history["grad_norm"].values()
                              if values[i] is not None and math.isfinite(values[i])))
                for i in range(len(self.steps))]

    def sentence(self):
        found = self.findings()
        if not found:
            return "no gradients yet" if not self.steps else "nothing unusual"
        line = "; ".join(found) + "."
        return line[0].upper() + line[1:]

    # ------------------------------------------------------------------ drawing
    def _show(self):
        self._shown = True
        self.summary.value = ""
        self.progress.value = f"<b>{self._progress_line()}</b>"
        if self.display:
            from IPython.display import display
            display(self)

    def _progress_line(self):
        if not self.steps:
            return f"GradientFlow: waiting for the first step (sampling every {self.every})"
        return (f"step {self.step_count} — {len(self.steps)} samples, every "
                f"{self.every} step{'s' * (self.every != 1)}")

    def panels(self):
        count = len(self.layers)
        labels = {name: f"{i + 1} {name}" for i, name in enumerate(self.layers)}
        colours = {name: layer_colour(i, count) for i, name in enumerate(self.layers)}

        def series(key, **options):
            return [Series(labels[n], self.steps, self.history[key][n], colours[n],
                           marker=None, **options) for n in self.layers]
        norm = Panel("gradient norm ‖g‖ per layer", series("grad_norm"), log_y=True)
        bands = Panel("|g| entries: median, 10–90th percentile band",
                      [Series(labels[n], self.steps, self.history["p50"][n], colours[n],
                              marker=None, legend=False, low=self.history["p10"][n],
                              high=self.history["p90"][n]) for n in self.layers], log_y=True)
        rule = Series("10⁻³ (rule of thumb)", self.steps, [RULE_OF_THUMB] * len(self.steps),
                      "#7f7f7f", dash=True, marker=None)
        updates = Panel("update / weight ‖Δw‖ / ‖w‖", series("update_ratio", legend=False)
                        + [rule], log_y=True)
        panels = [norm, bands, updates]
        dying = [n for n in self.layers if n in self.relu_layers
                 or any(v for v in self.history["dead"][n] if v)]
        if dying:
            panels.append(Panel("dead units (%)", [
                Series(labels[n], self.steps,
                       [None if v is None else 100 * v for v in self.history["dead"][n]],
                       colours[n], marker=None, legend=False) for n in dying]))
        return panels

    def _draw(self):
        self._drawn_at = time.monotonic()
        if self.steps:
            self.picture.svg = chart(self.panels(), width=WIDTH, panel_height=170,
                                     theme=self.picture.theme, title=self.title or "",
                                     x_label="training step")
        self.progress.value = f"<b>{self._progress_line()}</b>"
        self.verdict.value = ("<div style='color:var(--jp-ui-font-color1);max-width:"
                              f"{WIDTH}px'>{self.sentence()}</div>")
        self.summary.value = "" if self._summary_below or not self.steps else \
            "<pre style='margin:0;color:var(--jp-ui-font-color1)'>" + self.text() + "</pre>"

    # ------------------------------------------------------------------ text and display
    def text(self):
        """The saved form: per layer the last sample's numbers, then what they show."""
        if not self.steps:
            return "GradientFlow: no steps yet"
        lines = [f"GradientFlow: {len(self.steps)} samples of {self.step_count} steps "
                 f"(every {self.every})",
                 f"  {'layer':24} {'‖g‖':>8} {'median|g|':>10} {'update/w':>9} {'dead':>6}"]
        for i, name in enumerate(self.layers):
            values = {key: self.history[key][name][-1] for key in STATS}
            lines.append(f"  {f'{i + 1} {name}'[:24]:24} {_short(values['grad_norm']):>8} "
                         f"{_short(values['p50']):>10} {_short(values['update_ratio']):>9} "
                         + ("     -" if values["dead"] is None else f"{values['dead']:6.0%}"))
        lines.append("  " + self.sentence())
        return "\n".join(lines)

    def __repr__(self):
        return self.text()

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = LIVE if self.display and self._shown and \
            not self._summary_below else repr(self)
        return bundle


class _Named:
    """A variable's name and value, read from a session or a PyTorch-style parameter."""

    def __init__(self, name, value):
        self.name, self.value = name, value


def _name_of(variable):
    return getattr(variable, "name", None) or "weights"


def _short(value):
    return "-" if value is None else f"{value:.2g}"
