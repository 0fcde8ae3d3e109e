"""The README's opening pictures are the widgets' drawings of today (issue 41)."""
from pathlib import Path

import edugraph as eg
from widgets import readme_pictures

REPO = Path(__file__).resolve().parent.parent


def test_the_readme_opens_with_the_inspector_after_its_two_commands():
    readme = (REPO / "README.md").read_text()
    commands_end = readme.index("```", readme.index("```bash") + 3)
    assert readme.index("](docs/inspector.svg)") > commands_end
    assert readme.index("](docs/inspector.svg)") < readme.index("## ")


def test_the_inspector_picture_shows_values_gradients_and_the_mul_rule():
    svg = readme_pictures.inspector_svg()
    for words in ["switches", "4 × 2 = 8", "4 × 3 = 12", "∇ 12", "∇ 8", ">6<", ">-4<"]:
        assert words in svg, words
    assert svg == (REPO / "docs" / "inspector.svg").read_text(), \
        "docs/inspector.svg is stale: run python -m widgets.readme_pictures"


def test_the_projector_picture_draws_every_test_digit_and_is_fresh():
    svg = readme_pictures.projector_svg()
    _, (images, _) = eg.datasets.load_digits()
    assert svg.count("<circle data-id=") == len(images) and "PC1" in svg
    assert svg == (REPO / "docs" / "projector.svg").read_text(), \
        "docs/projector.svg is stale: run python -m widgets.readme_pictures"
    readme = (REPO / "README.md").read_text()
    assert readme.index("](docs/projector.svg)") < readme.index("## ")


def test_the_command_writes_the_pictures(tmp_path):
    readme_pictures.main(tmp_path)
    for name in ("inspector", "projector"):
        assert (tmp_path / f"{name}.svg").read_text().startswith("<svg")
