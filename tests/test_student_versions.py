"""The student versions (lessons/student/) are what nbgrader releases, up to date, and run.

- they are current: regenerating them changes nothing;
- the solved lessons go into an nbgrader course unchanged: ``nbgrader generate_assignment``
  releases what ``python -m edugraph.exercises.student_versions`` wrote;
- ``nbgrader validate``: every solved lesson passes all its tests, and every student
  version fails each of its grade cells;
- run top to bottom, a student version stops nowhere: its only errors are the stubs'
  ``NotImplementedError`` and the checks' "not attempted yet"; every other cell runs
  (one run of each student version, by nbgrader's validator, answers both).
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from edugraph.exercises import student_versions

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
SOLVED = student_versions.solved_lessons(LESSONS)
STUDENT = [LESSONS / "student" / p.name for p in SOLVED]
BIN = Path(sys.executable).parent
# nbgrader gives a cell 30 s by default; a lesson's training cell takes a few seconds alone,
# but CI runs the lessons twice at once on two cores.
CELL_TIMEOUT = 300
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def nbgrader(*args, cwd):
    return subprocess.run([str(BIN / "nbgrader"), *args], cwd=cwd, env=ENV, text=True,
                          capture_output=True, timeout=600)


def grade_cells(nb):
    return [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")]


def test_the_student_versions_are_up_to_date():
    result = subprocess.run([sys.executable, "-m", "edugraph.exercises.student_versions",
                             "--check"], cwd=ROOT, text=True, capture_output=True)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (LESSONS / "student").glob("*.ipynb")) == \
        sorted(p.name for p in SOLVED)


def _without_execution_times(nb):
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    return nb


def test_nbgrader_generate_assignment_releases_the_student_versions(tmp_path):
    """A teacher drops the solved lessons into an nbgrader course unchanged."""
    (tmp_path / "nbgrader_config.py").write_text(
        'c = get_config()\nc.CourseDirectory.course_id = "edugraph"\n')
    for path in SOLVED:
        folder = tmp_path / "source" / path.stem
        folder.mkdir(parents=True)
        shutil.copy(path, folder / path.name)
        result = nbgrader("generate_assignment", path.stem, "--create", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        released = nbformat.read(tmp_path / "release" / path.stem / path.name, 4)
        ours = nbformat.read(LESSONS / "student" / path.name, 4)
        assert ours.cells.pop(1).id == "student-version-note"
        # ours also lives in student/, where links to other notebooks are written to open
        # the files they open in the solved lesson
        released = student_versions.links_from_student_folder(released)
        assert _without_execution_times(released) == ours, path.name


@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.name)
def test_nbgrader_validate_passes_every_solved_lesson(path):
    result = nbgrader("validate", str(path), f"--Execute.timeout={CELL_TIMEOUT}", cwd=LESSONS)
    assert "Success! Your notebook passes all the tests." in result.stdout, \
        result.stdout[-3000:] + result.stderr[-3000:]


def _validate_keeping_the_run(path):
    """nbgrader's own ``Validator`` (what ``nbgrader validate`` runs) on ``path``: its failed
    cells, and the notebook it executed, so that one run of a student version answers both
    questions, nbgrader's verdict and what each cell did."""
    from nbgrader.validator import Validator
    from traitlets.config import Config

    class KeepingValidator(Validator):
        def _preprocess(self, nb):
            self.executed = super()._preprocess(nb)
            return self.executed

    config = Config()
    config.Execute.timeout = CELL_TIMEOUT
    validator = KeepingValidator(config=config)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PATH", ENV["PATH"])
        failed = validator.validate(str(path)).get("failed", [])
    return failed, validator.executed


@pytest.mark.parametrize("path", STUDENT, ids=lambda p: p.name)
def test_a_student_version_fails_each_grade_cell_and_runs_top_to_bottom(path):
    """``nbgrader validate`` fails on each grade cell, with the check's one line; and run top to
    bottom the notebook stops nowhere: the only errors are the stubs' NotImplementedError and
    the checks' "not attempted yet", and every other cell runs."""
    failed, nb = _validate_keeping_the_run(path)
    expected = len(grade_cells(nb))
    assert len(failed) == expected, [f["source"][:60] for f in failed]
    assert all("not attempted yet" in f["raw_error"] for f in failed), failed
    checks = 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        role = cell.metadata.get("nbgrader", {})
        errors = [o for o in cell.outputs if o.output_type == "error"]
        where = f"{path.name} cell {i}: {cell.source[:60]!r}"
        if role.get("grade"):
            checks += 1
            assert len(errors) == 1 and errors[0].ename == "NotAttempted", where
            assert errors[0].traceback == [errors[0].evalue], where   # one line, no traceback
            assert "not attempted yet" in errors[0].evalue, where
        elif role.get("solution"):
            assert all(e.ename == "NotImplementedError" for e in errors), \
                f"{where}: {[(e.ename, e.evalue) for e in errors]}"
        else:
            assert not errors, f"{where}: {[(e.ename, e.evalue) for e in errors]}"
    progress = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert progress.startswith(f"0 of {checks} done: "), progress
    assert json.dumps(nb.cells[-1].source).count("progress(") == 1
