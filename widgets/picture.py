"""Picture: a widget whose synced state IS its picture, an SVG string made in Python.

Why not plotly's FigureWidget, which the widgets used before: a FigureWidget keeps in its
synced state the traces it was *made* with, and sends every later change as a message that
only the views open at that moment apply (``_py2js_restyle`` and the like, set and reset).
A view made later — the same widget displayed again, a notebook reopened or a page reloaded
while its kernel runs, or a first view whose 5 MB script loaded after the messages went out on
a busy machine — starts from that first state: bare axes. Here a change of picture is a change
of state (``svg``), which every view draws, whenever it is made (anywidget's model: state is
the truth, messages are for events; TensorBoard's graph view likewise draws what it fetched).

The browser side is small: it puts the SVG on the page, shrinks it to the output area's width
(down to ``min_scale``, where the picture's 14 px numbers are 10 px; a wider picture is shown
whole as an overview, with ``focus`` marked, and a button zooms it to full size, scrolled to
``focus``; so does a picture taller than ``max_height``), reports clicks on an element with a
``data-id`` (``on_click``) and, where Python asks for them, the pointer entering one
(``on_hover``); it reports the notebook's theme (``dark``) and the width its output area gives
the picture (``room``), for which Python may draw the picture again (the projector draws its
points in the pixels it has, so that its labels keep their size).
"""
import anywidget
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
    el.classList.add("eg-picture");
    const bar = document.createElement("div");
    bar.className = "eg-picture-bar";
    const zoom = document.createElement("button");
    zoom.className = "eg-picture-zoom";
    bar.appendChild(zoom);
    const box = document.createElement("div");
    box.className = "eg-picture-box";
    el.append(bar, box);
    let zoomed = false;
    const fit = () => {
      const svg = box.querySelector("svg");
      if (!svg) return;
      const width = +svg.getAttribute("width"), height = +svg.getAttribute("height");
      const room = el.clientWidth, tall = model.get("max_height");
      let scale = room > 0 ? Math.min(1, room / width) : 1;
      if (tall > 0) scale = Math.min(scale, tall / height);
      const overview = scale < model.get("min_scale");
      if (overview && zoomed) scale = 1;
      svg.style.width = width * scale + "px";
      svg.style.height = height * scale + "px";
      el.classList.toggle("eg-overview", overview && !zoomed);
      bar.style.display = overview ? "" : "none";
      zoom.textContent = zoomed ? "show it whole" : "zoom to full size";
      const [fx, fy] = model.get("focus");
      const mark = svg.querySelector(".eg-focus");
      if (mark) mark.remove();
      if (fx < 0) return;
      if (overview && !zoomed) {
        const ring = document.createElementNS("http://www.w3.org/2000/svg", "circle");
        ring.setAttribute("class", "eg-focus");
        ring.setAttribute("cx", fx); ring.setAttribute("cy", fy);
        ring.setAttribute("r", 16 / scale);
        ring.setAttribute("stroke-width", 3 / scale);
        svg.appendChild(ring);
      } else if (scale === 1) {
        const left = box.scrollLeft, seen = box.clientWidth;
        if (fx < left + seen / 4 || fx > left + seen * 3 / 4) box.scrollLeft = fx - seen / 2;
        const top = box.scrollTop, high = box.clientHeight;
        if (fy < top || fy > top + high) box.scrollTop = fy - high / 2;
      }
    };
    const draw = () => {
      box.innerHTML = model.get("svg");
      box.style.maxHeight = model.get("max_height") > 0 ? model.get("max_height") + "px" : "";
      fit();
    };
    zoom.addEventListener("click", () => { zoomed = !zoomed; fit(); });
    box.addEventListener("click", (event) => {
      const hit = event.target.closest("[data-id]");
      if (hit && box.contains(hit)) model.send({ click: hit.dataset.id });
    });
    box.addEventListener("pointerover", (event) => {
      const hit = model.get("report_hover") && event.target.closest("[data-id]");
      if (hit && box.contains(hit)) model.send({ hover: hit.dataset.id });
    });
    const tell = () => {
      if (model.get("dark") !== isDark()) { model.set("dark", isDark()); model.save_changes(); }
    };
    const watch = new MutationObserver(tell);
    watch.observe(document.body, { attributes: true });
    const measure = () => {
      const room = Math.floor(el.clientWidth);
      if (room > 0 && model.get("room") !== room) { model.set("room", room); model.save_changes(); }
    };
    const sizes = new ResizeObserver(() => { measure(); fit(); });
    sizes.observe(el);
    model.on("change:svg", draw);
    model.on("change:focus", fit);
    model.on("change:min_scale", fit);
    model.on("change:max_height", draw);
    draw();
    tell();
    measure();
    return () => {
      watch.disconnect(); sizes.disconnect();
      model.off("change:svg", draw); model.off("change:focus", fit);
      model.off("change:min_scale", fit); model.off("change:max_height", draw);
    };
  },
};
"""

CSS = """
.eg-picture { display: block; width: 100%; min-width: 0; }
.eg-picture-box { overflow: auto; max-width: 100%; }
.eg-picture-box svg { display: block; }
.eg-picture-box [data-id] { cursor: pointer; }
.eg-picture-box svg text { pointer-events: none; }   /* a click on a sign hits its node */
.eg-picture-bar { margin: 0 0 4px 0; }
.eg-picture-zoom { font: inherit; font-size: var(--jp-ui-font-size1, 13px);
  color: var(--jp-ui-font-color1, #1f1f1f); background: var(--jp-layout-color2, #eeeeee);
  border: 1px solid var(--jp-border-color1, #bdbdbd); border-radius: 2px; cursor: pointer; }
.eg-picture .eg-focus { fill: none; stroke: #e66100; pointer-events: none; }
"""

READABLE = 10 / 14      # the least scale at which a picture's 14 px numbers are 10 px


class Picture(anywidget.AnyWidget):
    """An SVG picture (``svg``) that every view draws from the widget's state.

    ``min_scale``: how far the picture may shrink to fit the output area before it is shown
    as an overview instead; ``focus``: the point (px, in the picture) to keep in view, marked
    in the overview ((-1, -1): none); ``max_height``: px, a taller picture scrolls (0: no
    limit); ``dark``: the notebook's theme, and ``room``: the width in px the output area gives
    the picture (0 until shown), as the browser reports them; ``report_hover``: whether the
    browser reports the pointer entering an element with a ``data-id`` (``on_hover`` sets it).
    """

    _esm = ESM
    _css = CSS
    svg = traitlets.Unicode("").tag(sync=True)
    min_scale = traitlets.Float(READABLE).tag(sync=True)
    focus = traitlets.Tuple(traitlets.Float(), traitlets.Float(),
                            default_value=(-1.0, -1.0)).tag(sync=True)
    max_height = traitlets.Int(0).tag(sync=True)
    dark = traitlets.Bool(False).tag(sync=True)
    room = traitlets.Int(0).tag(sync=True)
    report_hover = traitlets.Bool(False).tag(sync=True)

    def __init__(self, svg="", **kwargs):
        super().__init__(svg=svg, **kwargs)
        self._click_handlers, self._hover_handlers = [], []
        self.on_msg(self._on_message)

    @property
    def theme(self):
        return "dark" if self.dark else "light"

    def on_click(self, handler):
        """Call ``handler(data_id)`` when the student clicks an element with a ``data-id``."""
        self._click_handlers.append(handler)

    def on_hover(self, handler):
        """Call ``handler(data_id)`` when the pointer enters an element with a ``data-id``."""
        self._hover_handlers.append(handler)
        self.report_hover = True

    def _on_message(self, _widget, content, _buffers):
        if not isinstance(content, dict):
            return
        for key, handlers in (("click", self._click_handlers), ("hover", self._hover_handlers)):
            if key in content:
                for handler in handlers:
                    handler(str(content[key]))
