"""Read a widget's SVG picture back, as the browser would draw it: which texts, nodes, rings
and lines it holds, with their colours (tests assert on what is drawn, not on how)."""
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


class Drawn:
    def __init__(self, svg):
        self.root = ET.fromstring(svg)
        self.width = float(self.root.get("width"))
        self.height = float(self.root.get("height"))

    def elements(self, tag=None, cls=None):
        return [e for e in self.root.iter()
                if (tag is None or e.tag == NS + tag) and (cls is None or e.get("class") == cls)]

    def texts(self, cls=None):
        """The words of every text of class ``cls`` (all texts: None), in drawing order."""
        return [e.text or "" for e in self.elements("text", cls)]

    def text_elements(self, cls=None):
        return self.elements("text", cls)

    def nodes(self):
        """{data-id: (shape element, tooltip)} of every clickable node or box."""
        found = {}
        for g in self.elements("g"):
            if g.get("data-id") is not None:
                title = g.find(NS + "title")
                shape = next(c for c in g if c.tag != NS + "title")
                found[g.get("data-id")] = (shape, title.text if title is not None else "")
        return found

    def rings(self):
        return [(float(e.get("cx")), float(e.get("cy")), e.get("stroke"))
                for e in self.elements("circle", "ring")]

    def paths(self, cls):
        """The `d` of every path of class ``cls``, and its stroke colour."""
        return [(e.get("d"), e.get("stroke")) for e in self.elements("path", cls)]

    def series(self, name):
        """The tooltips of the points of the chart series ``name`` (``widgets/chart.py``), and
        whether its line is dashed; None if the chart has no such series."""
        for g in self.elements("g", "series"):
            if g.get("data-series") == name:
                tips = [t.text for t in g.iter(NS + "title")]
                line = g.find(NS + "path")
                return tips, line is not None and line.get("stroke-dasharray") is not None
        return None
