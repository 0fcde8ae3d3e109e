"""How the widgets fit the notebook they are in: its theme, light or dark, and its width.

Python cannot see the page. ``ThemeProbe`` is an invisible widget whose few lines of
JavaScript read JupyterLab's theme (``data-jp-theme-light`` on the page's body, which
JupyterLab sets and changes when the student picks another theme; elsewhere, the lightness
of the background) and send it back as ``dark``, and the width of the output area it is shown
in as ``width`` (again whenever that changes: a resized window, the file browser opened). A
widget puts a probe among its children and redraws its figures when ``dark`` or ``width``
changes: a plotly figure has a size in pixels, which the widget must choose. A figure wider
than the notebook scrolls in its box: the widget sets ``keep_in_view`` to the point (px from the
figure's left) the student must see, e.g. the node the text beside it describes, and the probe
scrolls the box there when that point is out of view. HTML parts need no probe: they are
styled with JupyterLab's CSS variables (``var(--jp-ui-font-color1)``), which follow the theme
by themselves.
"""
import anywidget
import ipywidgets as w
import traitlets

ESM = """
function isDark() {
  const light = document.body.dataset.jpThemeLight;
  if (light !== undefined) return light === "false";
  const rgb = getComputedStyle(document.body).backgroundColor.match(/[\\d.]+/g) || [255];
  const [r, g, b] = rgb.map(Number);
  return 0.2126 * r + 0.7152 * g + 0.0722 * (b === undefined ? r : b) < 128;
}
export default {
  render({ model, el }) {
    el.style.display = "none";
    const tell = () => {
      if (model.get("dark") !== isDark()) {
        model.set("dark", isDark());
        model.save_changes();
      }
    };
    tell();
    const watch = new MutationObserver(tell);
    watch.observe(document.body, { attributes: true });
    // the output area (JupyterLab, Notebook 7), else whatever holds the widget
    let area = null;
    const measure = () => {
      area = area || el.closest(".jp-OutputArea-output") || el.parentElement;
      const width = area ? Math.floor(area.clientWidth) : 0;
      if (width > 0 && model.get("width") !== width) {
        model.set("width", width);
        model.save_changes();
      }
    };
    const sizes = new ResizeObserver(measure);
    requestAnimationFrame(() => { measure(); if (area) sizes.observe(area); });
    // the first figure beside the probe, in its scroll box; tried again for a while, as the
    // figure is drawn (and widened) after the probe hears of the point
    const follow = (deadline) => {
      const x = model.get("keep_in_view");
      const plot = el.parentElement && el.parentElement.querySelector(".js-plotly-plot");
      const box = plot && plot.closest(".widget-box");
      if (x < 0) return;
      if (!box || box.scrollWidth < x) {
        if (performance.now() < deadline) setTimeout(() => follow(deadline), 100);
        return;
      }
      // (near an edge counts as out of view: the words on a node's wires are beside it)
      const left = box.scrollLeft, seen = box.clientWidth;
      if (x < left + seen / 4 || x > left + seen * 3 / 4) box.scrollLeft = x - seen / 2;
    };
    const followSoon = () => follow(performance.now() + 5000);
    model.on("change:keep_in_view", followSoon);
    followSoon();
    return () => {
      watch.disconnect(); sizes.disconnect(); model.off("change:keep_in_view", followSoon);
    };
  },
};
"""


class ThemeProbe(anywidget.AnyWidget):
    """``dark`` is True while the notebook shows a dark theme; ``width`` is the width in px of
    the output area the widget is in (0 until a browser has shown it); ``keep_in_view``: the
    point of the figure beside the probe that its scroll box shows (-1: none)."""

    _esm = ESM
    dark = traitlets.Bool(False).tag(sync=True)
    width = traitlets.Int(0).tag(sync=True)
    keep_in_view = traitlets.Float(-1).tag(sync=True)

    @property
    def name(self):
        return "dark" if self.dark else "light"


# Figure settings per theme: plotly's template, and a see-through background so that the
# figure takes the notebook's own background colour.
FIGURE = {
    "light": dict(template="plotly_white", paper_bgcolor="rgba(0,0,0,0)",
                  plot_bgcolor="rgba(0,0,0,0)", font=dict(color="#1f1f1f")),
    "dark": dict(template="plotly_dark", paper_bgcolor="rgba(0,0,0,0)",
                 plot_bgcolor="rgba(0,0,0,0)", font=dict(color="#e8e8e8")),
}


def wrapping():
    """The layout of a row whose items wrap onto the next line in a narrow notebook (a new
    Layout each time: boxes sharing one would share their ``display`` too)."""
    return w.Layout(flex_flow="row wrap", align_items="center")
