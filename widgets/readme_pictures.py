"""The README's opening pictures, drawn by the widgets themselves (no browser needed):

    python -m widgets.readme_pictures

writes ``docs/inspector.svg`` and ``docs/projector.svg``. The first: the inspector on the lecture's example f = (w·x + b)², stepped
to the backward step of its mul, so that every wire shows its value above and its gradient
below, and the mul's rule ("switches": each input receives the gradient times the other) is
the one lit. The second: the embedding projector on the test images of scikit-learn's bundled digits
(their 64 pixels as the embedding), projected by PCA and coloured by digit. Each SVG is the
widget's own state, the very string a notebook view draws.
"""
import sys
from pathlib import Path

import edugraph as eg
from widgets.inspector import GraphInspector
from widgets.projector import Projector

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
    return on_white(inspector.picture.svg)


def projector_svg():
    _, (images, digits) = eg.datasets.load_digits()
    projector = Projector(images.reshape(len(images), -1),
                          metadata={"digit": digits.tolist()}, images=images)
    projector.widget.colour_by.value = "digit"
    return on_white(projector.widget.picture.svg)


def on_white(svg):
    """(A white ground: the widgets' pictures are see-through, for the notebook's own, and
    GitHub's dark mode would put their dark words on black.)"""
    head = svg.index(">") + 1
    return svg[:head] + '<rect width="100%" height="100%" fill="white"/>' + svg[head:]


def main(folder=DOCS):
    folder = Path(folder)
    folder.mkdir(exist_ok=True)
    for name, draw in [("inspector", inspector_svg), ("projector", projector_svg)]:
        path = folder / f"{name}.svg"
        path.write_text(draw())
        print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main(*sys.argv[1:])
