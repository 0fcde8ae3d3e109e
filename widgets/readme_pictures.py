"""The README's opening pictures, drawn by the widgets themselves (no browser needed):

    python -m widgets.readme_pictures

writes ``docs/inspector.svg``: the inspector on the lecture's example f = (w·x + b)², stepped
to the backward step of its mul, so that every wire shows its value above and its gradient
below, and the mul's rule ("switches": each input receives the gradient times the other) is
the one lit. The SVG is the widget's own state, the very string a notebook view draws.
"""
import sys
from pathlib import Path

from widgets.inspector import GraphInspector

DOCS = Path(__file__).resolve().parent.parent / "docs"


def lecture_example():
    def f(x, w, b):
        return (w * x + b) ** 2
    return f


def inspector_svg():
    inspector = GraphInspector(lecture_example(), x=2.0, w=3.0, b=-4.0)
    walk = inspector.view.steps()
    mul = inspector.view.node("mul").id
    inspector.step.value = max(i for i, s in enumerate(walk)
                               if s["phase"] == "backward" and s["node"] == mul)
    svg = inspector.picture.svg
    # (a white ground: the widget's picture is see-through, for the notebook's own, and
    # GitHub's dark mode would put its dark words on black)
    head = svg.index(">") + 1
    return svg[:head] + '<rect width="100%" height="100%" fill="white"/>' + svg[head:]


def main(folder=DOCS):
    folder = Path(folder)
    folder.mkdir(exist_ok=True)
    path = folder / "inspector.svg"
    path.write_text(inspector_svg())
    print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main(*sys.argv[1:])
