"""The student versions (lessons/student/) are what nbgrader releases, up to date, and run.

- they are current: regenerating them changes nothing;
- the solved lessons go into an nbgrader course unchanged: ``nbgrader generate_assignment``
  releases what ``python -m edugraph.exercises.student_versions`` wrote;
- ``nbgrader validate``: every solved lesson passes all its tests, and every student
  version fails each of its grade cells;
- run top to bottom, a student version stops nowhere: its only errors are the stubs'
  ``NotImplementedError`` and the checks' "not attempted yet"; every other cell runs
  (one run of each student version, by nbgrader's validator, answers both);
- a course set up as lessons/README.md says grades submissions: autograde, export, feedback.
"""
import csv
import html
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
        released = student_versions.links_from_student_folder(released, path.name)
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
            # the check's line alone (wrapped), no traceback
            assert "\n".join(errors[0].traceback) == errors[0].evalue, where
            assert "not attempted yet" in errors[0].evalue, where
        elif role.get("solution"):
            assert all(e.ename == "NotImplementedError" for e in errors), \
                f"{where}: {[(e.ename, e.evalue) for e in errors]}"
        else:
            assert not errors, f"{where}: {[(e.ename, e.evalue) for e in errors]}"
    progress = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert progress.startswith(f"0 of {checks} done: "), progress
    assert json.dumps(nb.cells[-1].source).count("progress(") == 1


# ----------------------------------------------------------------- an nbgrader course, graded
def _readme_course_config():
    """The ``nbgrader_config.py`` that lessons/README.md gives teachers (its python block under
    "Grading with nbgrader"), so that the course below is configured as the README says."""
    text = (LESSONS / "README.md").read_text()
    section = text.split("## Grading with nbgrader", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def _submission(released, answers):
    """The released notebook with ``answers`` ({grade_id: source}) in its answer cells."""
    nb = nbformat.read(released, 4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return nb


def _solutions(path):
    """Each answer cell's solution as a student would write it (no nbgrader markers)."""
    return {cell.metadata["nbgrader"]["grade_id"]:
            "\n".join(line for line in cell.source.splitlines()
                      if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
            for cell in nbformat.read(path, 4).cells
            if cell.metadata.get("nbgrader", {}).get("solution")}


def test_an_nbgrader_course_grades_right_wrong_and_missing_answers(tmp_path):
    """The teacher's whole round with lesson 0, configured as lessons/README.md says: release,
    collect three submissions (every answer right; 0.1 with the chain rule forgotten and the
    rest untouched; nothing answered), autograde, export the grades and write the feedback."""
    lesson = "00_start_here"
    (tmp_path / "nbgrader_config.py").write_text(_readme_course_config())
    (tmp_path / "source" / lesson).mkdir(parents=True)
    shutil.copy(LESSONS / f"{lesson}.ipynb", tmp_path / "source" / lesson)
    result = nbgrader("generate_assignment", lesson, "--create", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    released = tmp_path / "release" / lesson / f"{lesson}.ipynb"
    submissions = {"ann": _solutions(LESSONS / f"{lesson}.ipynb"),
                   "bob": {"ex0_1_answer": "dy_dx = 2 * (3 * 2 + 1)"},
                   "cem": {}}
    for student, answers in submissions.items():
        folder = tmp_path / "submitted" / student / lesson
        folder.mkdir(parents=True)
        nbformat.write(_submission(released, answers), folder / f"{lesson}.ipynb")

    for step in (("autograde", lesson), ("export",), ("generate_feedback", lesson)):
        result = nbgrader(*step, cwd=tmp_path)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    grades = {row["student_id"]: (float(row["score"]), float(row["max_score"]))
              for row in csv.DictReader((tmp_path / "grades.csv").open())}
    assert grades == {"ann": (3.0, 3.0), "bob": (0.0, 3.0), "cem": (0.0, 3.0)}
    feedback = {student: html.unescape((tmp_path / "feedback" / student / lesson /
                                        f"{lesson}.html").read_text())
                for student in submissions}
    assert "dy/dx = 42: the outer derivative" in feedback["ann"]
    assert "you differentiated the square but not what is inside it" in feedback["bob"]
    assert "0.2 not attempted yet" in feedback["bob"]
    assert all(f"0.{i} not attempted yet" in feedback["cem"] for i in (1, 2, 3))
    # the README's store_widget_state = False: the inspector's figure leaves plotly's widget
    # code (5 MB) out of the autograded notebooks
    for student in submissions:
        graded = tmp_path / "autograded" / student / lesson / f"{lesson}.ipynb"
        assert graded.stat().st_size < 200_000, (student, graded.stat().st_size)
