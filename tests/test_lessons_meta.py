"""The lesson notebooks are fit to ship: small, stateless, executed, readable, in order.

nbval (``pytest lessons/``) checks that each lesson runs and still prints what it stored; these
tests check what nbval does not: the files themselves.
"""
import base64
import json
import re
import struct
from pathlib import Path

import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
NOTEBOOKS = sorted(LESSONS.glob("*.ipynb"))
MAX_BYTES = 1024 * 1024
MAX_LINE = 78
PLOTLY = "application/vnd.plotly.v1+json"
MAX_IMAGE_BYTES = 100 * 1024
RECORD = "python -m edugraph.exercises.record"
# Things that differ between runs or machines, so nbval would fail on them.
MACHINE_DETAILS = re.compile(r" at 0x[0-9a-fA-F]{6,}|/tmp/|\\Temp\\|/home/\w+/")


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell):
    text = cell["source"]
    return text if isinstance(text, str) else "".join(text)


def compared(cell):
    """Whether nbval compares this cell's stored output with a fresh run."""
    return "nbval-ignore-output" not in cell.get("metadata", {}).get("tags", [])


def output_texts(cell):
    for output in cell.get("outputs", []):
        for text in (output.get("text"), output.get("data", {}).get("text/plain")):
            if text:
                yield text if isinstance(text, str) else "".join(text)


def test_there_are_lessons():
    assert NOTEBOOKS, f"no notebooks found in {LESSONS}"


def test_names_are_numbered_in_order():
    numbers = []
    for path in NOTEBOOKS:
        match = re.fullmatch(r"(\d\d)_[a-z0-9_]+\.ipynb", path.name)
        assert match, f"{path.name}: lesson files are named NN_words_in_snake_case.ipynb"
        numbers.append(int(match[1]))
    assert numbers == sorted(set(numbers)), f"duplicate lesson numbers: {numbers}"
    assert numbers[:2] == [0, 1], "the start page is number 00 and the first lesson 01"


def test_readme_lists_every_lesson():
    readme = (LESSONS / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in NOTEBOOKS if p.name not in readme]
    assert not missing, f"lessons/README.md does not list {missing}"


LINK = re.compile(r"\]\(([^)\s]+)\)")       # a markdown link's target: [text](target)


def link_targets(path):
    """The targets of the markdown links in the notebook at ``path``."""
    return [m[1] for c in load(path)["cells"] if c["cell_type"] == "markdown"
            for m in LINK.finditer(source(c))]


@pytest.mark.parametrize("path", NOTEBOOKS + sorted((LESSONS / "student").glob("*.ipynb")),
                         ids=lambda p: p.relative_to(LESSONS).as_posix())
def test_links_to_files_open_a_file(path):
    """The start page links every solved lesson and its student version; the student
    version of the page (in student/) must open the same files."""
    local = [t for t in link_targets(path) if not re.match(r"[a-z][a-z0-9+.-]*:|#", t)]
    broken = [t for t in local if not (path.parent / t.split("#")[0]).is_file()]
    assert not broken, f"{path.relative_to(LESSONS)}: links to no file: {broken}"


def notebooks_opened(path):
    """The notebooks that ``path``'s markdown links open."""
    return {(path.parent / t).resolve() for t in link_targets(path) if t.endswith(".ipynb")}


def test_the_start_pages_links_open_the_same_notebooks_in_both_versions():
    solved = notebooks_opened(LESSONS / "00_start_here.ipynb")
    assert len(solved) == 2 * 12 + 1        # each lesson twice, and this page's student version
    # the student version's note at its top links back to the solved page as well; its
    # "student version of this page" is text there, not a link to itself
    assert notebooks_opened(LESSONS / "student" / "00_start_here.ipynb") == \
        solved - {LESSONS / "student" / "00_start_here.ipynb"} | {LESSONS / "00_start_here.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_small_enough(path):
    size = path.stat().st_size
    assert size < MAX_BYTES, (f"{path.name} is {size / 2**20:.2f} MiB; keep it under 1 MiB "
                              "(strip widget state, avoid embedding plotly.js)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_widget_state(path):
    nb = load(path)
    assert "widgets" not in nb.get("metadata", {}), (
        f"{path.name} stores widget state in metadata.widgets; record the lesson with "
        f"{RECORD} lessons/{path.name}, which leaves it out")
    assert "application/vnd.jupyter.widget-state+json" not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_cell_is_a_markdown_title(path):
    first = load(path)["cells"][0]
    assert first["cell_type"] == "markdown", f"{path.name}: the first cell must be markdown"
    assert source(first).startswith("# "), f"{path.name}: the first cell starts with '# Title'"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_code_cells_are_executed_in_order(path):
    counts = []
    for i, cell in enumerate(code_cells(load(path))):
        assert cell.get("execution_count") is not None, (
            f"{path.name}: code cell {i} was never run; record the lesson with its outputs: "
            f"{RECORD} lessons/{path.name}")
        counts.append(cell["execution_count"])
        assert not any(o.get("output_type") == "error" for o in cell.get("outputs", [])), \
            f"{path.name}: code cell {i} stored an error"
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: cells were run out of order ({counts}); re-run top to bottom")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_code_lines_fit_the_page(path):
    long = [(i, line) for i, cell in enumerate(code_cells(load(path)))
            for line in source(cell).splitlines() if len(line) > MAX_LINE]
    assert not long, (f"{path.name}: code lines over {MAX_LINE} characters (cell, line): "
                      f"{long[:3]}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_ends_with_exercises(path):
    """The checked exercises themselves are tested in test_exercises.py."""
    headings = [c for c in load(path)["cells"]
                if c["cell_type"] == "markdown" and source(c).startswith("## Exercises")]
    assert len(headings) == 1, f"{path.name}: one '## Exercises' section ends the lesson"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_compared_outputs_hold_no_machine_details(path):
    found = [(i, match[0]) for i, cell in enumerate(code_cells(load(path))) if compared(cell)
             for text in output_texts(cell) for match in [MACHINE_DETAILS.search(text)] if match]
    assert not found, (f"{path.name}: stored outputs that nbval compares show memory addresses "
                       f"or temporary paths, which change on every run (cell, text): {found[:3]}; "
                       "print names instead, or tag the cell nbval-ignore-output")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_nbvals_markers_are_tags_not_lines_students_read(path):
    marked = [i for i, cell in enumerate(code_cells(load(path)))
              if "NBVAL_" in source(cell)]
    assert not marked, (f"{path.name}: code cells {marked} start with an nbval comment, which "
                        "the student reads as code; give the cell the tag (e.g. "
                        "nbval-ignore-output) instead")


def png_size(data):
    """(width, height) of a PNG, or None when ``data`` is not one."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def figures(nb):
    """(cell index, output) of every output that holds a plotly figure."""
    return [(i, output) for i, cell in enumerate(code_cells(nb))
            for output in cell.get("outputs", []) if PLOTLY in output.get("data", {})]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_figures_are_plotly_outputs(path):
    """A figure shown another way (plotly.js in HTML) would get no PNG and weigh megabytes."""
    html = [i for i, cell in enumerate(code_cells(load(path)))
            for output in cell.get("outputs", [])
            if "plotly" in "".join(output.get("data", {}).get("text/html", ""))]
    assert not html, (f"{path.name}: code cells {html} show a plotly figure as HTML; "
                      'show it with fig.show(renderer="plotly_mimetype")')


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_figure_has_a_png_beside_it(path):
    """GitHub and nbviewer run no plotly.js: they show the PNG stored in the figure's output.

    nbval compares no PNG, so a fresh run, which makes none, still matches; the PNG is drawn
    from the stored figure at the figure's own width and height (scale 1).
    """
    for i, output in figures(load(path)):
        data = output["data"]
        assert "image/png" in data, (
            f"{path.name}: the figure in code cell {i} has no PNG beside it, so GitHub shows "
            f"nothing; record the lesson with {RECORD} lessons/{path.name} "
            "(--no-execute to keep its outputs)")
        png = base64.b64decode("".join(data["image/png"]))
        size = png_size(png)
        assert size, f"{path.name}: code cell {i}: the figure's image/png is not a PNG"
        layout = data[PLOTLY].get("layout", {})
        expected = (layout.get("width", size[0]), layout.get("height", size[1]))
        assert size == expected, (f"{path.name}: code cell {i}: the PNG is {size[0]}×{size[1]}, "
                                  f"the figure {expected[0]}×{expected[1]}; record it again")
        assert len(png) <= MAX_IMAGE_BYTES, (
            f"{path.name}: code cell {i}: the figure's PNG is {len(png) // 1024} KiB "
            f"(at most {MAX_IMAGE_BYTES // 1024}); record it with {RECORD}")
