"""The README's examples run as printed (the GPU one needs a GPU, so it is left to the lessons)."""
import contextlib
import io
import re
from pathlib import Path

README = (Path(__file__).parent.parent / "README.md").read_text()
EXAMPLES = [b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "gpu" not in b]


def test_readme_starts_with_the_two_commands():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert README.index("```bash") < README.index("\n## ")
    assert first_block[0].endswith(
        'pip install -e ".[lab]" && jupyter lab lessons/00_start_here.ipynb')
    assert first_block[1].endswith('pip install -e ".[test]" && python -m pytest')


def test_examples_print_what_their_comments_say():
    assert len(EXAMPLES) >= 2
    for example in EXAMPLES:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(example, "README.md", "exec"), {})
        printed = out.getvalue().splitlines()
        promised = [c.strip() for line in example.splitlines() if "print(" in line
                    and "#" in line for c in [line.split("#", 1)[1]]]
        assert printed[:len(promised)] == promised
