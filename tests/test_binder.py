"""Binder builds the lessons' environment with repo2docker from ``binder/``: Python 3.11, and
``binder/requirements.txt`` installed after the repository is copied in (it installs the
repository itself, ``-e .[lab]``, which does not exist in the image before the copy).

``repo2docker --no-build --debug`` prints the Dockerfile it would build, without Docker. That a
fresh environment made from ``binder/requirements.txt`` alone runs every lesson is checked by
``.ci/run`` (it needs a new virtual environment and the package index).
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def dockerfile():
    repo2docker = Path(sys.executable).parent / "repo2docker"
    result = subprocess.run([str(repo2docker), "--no-build", "--no-run", "--debug", str(ROOT)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout + result.stderr


def test_repo2docker_picks_python_3_11(dockerfile):
    assert "Building conda environment for python=3.11" in dockerfile


def test_binder_requirements_are_installed_after_the_repository_is_copied_in(dockerfile):
    lines = dockerfile.splitlines()
    copy = [i for i, line in enumerate(lines) if re.match(r"COPY .*src/ \$\{REPO_DIR\}/", line)]
    install = [i for i, line in enumerate(lines)
               if "pip install" in line and '-r "binder/requirements.txt"' in line]
    assert copy and install, "repo2docker no longer copies the repository or installs binder/"
    assert copy[0] < install[0], "binder/requirements.txt would be installed before the copy"


def test_binder_installs_the_repository_with_the_lab_extra():
    requirements = (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8")
    assert "-e .[lab]" in requirements.split("\n")


def test_the_readme_gives_binders_launch_url_for_the_start_page():
    url = re.search(r"\(https://mybinder\.org/v2/gh/([\w.-]+)/([\w.-]+)/HEAD\?urlpath="
                    r"([^\s)]+)\)", README)
    assert url, "README: no Binder launch URL (https://mybinder.org/v2/gh/OWNER/REPO/HEAD?...)"
    assert url[3] == "lab/tree/lessons/00_start_here.ipynb"
    assert (ROOT / "lessons" / "00_start_here.ipynb").exists()
