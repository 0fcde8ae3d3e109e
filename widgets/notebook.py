"""How the widgets fit the notebook they are in: its theme, light or dark, and its width.

Python cannot see the page. ``ThemeProbe`` is an invisible widget whose few lines of
JavaScript read JupyterLab's theme (``data-jp-theme-light`` on the page's body, which
JupyterLab sets and changes when the student picks another theme; elsewhere, the lightness
of the background) and send it back as ``dark``, and the width of the output area it is shown
in as ``width`` (again whenever that changes: a resized window, the file browser opened). A
widget puts a probe among its children and redraws its figures when ``dark`` or ``width``
changes: a plotly figure has a size in pixels, which the widget must choose. HTML parts need no
probe: they are styled with JupyterLab's CSS variables (``var(--jp-ui-font-color1)``), which
follow the theme by themselves.
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
    return () => { watch.disconnect(); sizes.disconnect(); };
  },
};
"""


class ThemeProbe(anywidget.AnyWidget):
    """``dark`` is True while the notebook shows a dark theme; ``width`` is the width in px of
    the output area the widget is in (0 until a browser has shown it)."""

    _esm = ESM
    dark = traitlets.Bool(False).tag(sync=True)
    width = traitlets.Int(0).tag(sync=True)

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
