"""Every lesson's checked exercises, through the one mechanism that checks them.

What holds for every exercise is tested here, over all of them: the lesson's cells carry
nbgrader's metadata; every known mistake earns its own hint; an untouched answer reads as
"not attempted"; wrongly typed answers get one line, never a traceback; the notebook never
sets an answer's name before the student does. Each lesson's own test file adds its
solutions and the mistakes that need a closer look.
"""
import ast
import json
import re
from pathlib import Path

import numpy as np
import pytest

import edugraph as eg
from edugraph.exercises import ExerciseNotPassed, NotAttempted, check, progress
from edugraph.exercises.answers import function
from edugraph.exercises.checking import WIDTH, _results, exercises_of, find, shown

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
SOLVED = sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))
CHECK_CALL = re.compile(r'^check\("(\d+\.\d+)"\)$')


def lesson_number(path):
    return int(path.name[:2])


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell):
    text = cell["source"]
    return text if isinstance(text, str) else "".join(text)


def nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def checked_ids(path):
    return [m[1] for c in cells(path) if c["cell_type"] == "code"
            for m in [CHECK_CALL.match(source(c).strip())] if m]


def all_exercises():
    found = []
    for path in SOLVED:
        try:
            found += exercises_of(lesson_number(path))
        except ValueError:      # no exercises module: the per-lesson test below says so
            pass
    return found


EXERCISES = all_exercises()
MISTAKES = [(e, i) for e in EXERCISES for i in range(len(e.mistakes))]


def ids(value):
    return value.id if hasattr(value, "id") else str(value)


# ------------------------------------------------------------------------ the notebooks
@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.name)
def test_each_lesson_has_at_least_three_checked_exercises_and_ends_with_progress(path):
    found = checked_ids(path)
    assert len(found) >= 3, f"{path.name}: {len(found)} checked exercises; at least 3 wanted"
    registered = [e.id for e in exercises_of(lesson_number(path))]
    assert found == registered, (f"{path.name} checks {found} but edugraph.exercises."
                                 f"lesson{lesson_number(path):02d} defines {registered}")
    last = [c for c in cells(path) if c["cell_type"] == "code"][-1]
    assert source(last).strip() == f"progress({lesson_number(path)})"


@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.name)
def test_exercise_cells_carry_nbgraders_metadata(path):
    """prompt (read-only) → answer (solution cell with the markers) → check (locked grade
    cell with points), so a teacher can put the lesson into an nbgrader course unchanged."""
    from nbgrader.nbgraderformat import MetadataValidator
    nb = json.loads(path.read_text(encoding="utf-8"))
    MetadataValidator().validate_nb(__import__("nbformat").from_dict(nb))
    all_cells = nb["cells"]
    grade_ids = [nbgrader(c)["grade_id"] for c in all_cells if nbgrader(c)]
    assert len(grade_ids) == len(set(grade_ids)), f"{path.name}: grade ids repeat"
    for i, cell in enumerate(all_cells):
        match = CHECK_CALL.match(source(cell).strip()) if cell["cell_type"] == "code" else None
        if not match:
            continue
        name = f"{path.name} exercise {match[1]}"
        check_meta, answer, prompt = nbgrader(cell), all_cells[i - 1], all_cells[i - 2]
        assert check_meta.get("grade") and check_meta.get("locked") and \
            not check_meta.get("solution") and check_meta.get("points", 0) > 0, name
        assert "raises-exception" in cell["metadata"].get("tags", []), name
        assert nbgrader(answer).get("solution") and not nbgrader(answer).get("grade"), name
        text = source(answer)
        assert "### BEGIN SOLUTION" in text and "### END SOLUTION" in text, name
        assert "raises-exception" in answer["metadata"].get("tags", []), name
        assert prompt["cell_type"] == "markdown" and nbgrader(prompt).get("locked"), name
        assert f"**{match[1]}" in source(prompt), f"{name}: the prompt starts with its number"


def _names_set(code):
    """Names a cell's code binds in the notebook's namespace (assignments, defs, imports,
    loops), not the local names inside the functions and classes it defines."""
    try:
        tree = ast.parse(code)
    except SyntaxError:         # IPython magics: not Python, and set no answers
        return set()
    names, scopes = set(), (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        if not isinstance(node, scopes):
            pending.extend(ast.iter_child_nodes(node))
    return names


def test_names_set_are_the_notebooks_not_a_functions_locals():
    code = "import numpy as np\nx, (y, z) = 1, (2, 3)\nfor i in range(2):\n    k = i\n" \
           "def f(a):\n    local = a\n    return local\nclass C:\n    attr = 1\n" \
           "g = lambda q: q\nwith open('p') as handle:\n    pass\n"
    assert _names_set(code) == {"np", "x", "y", "z", "i", "k", "f", "C", "g", "handle"}


@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.name)
def test_no_answer_name_is_set_before_the_student_sets_it(path):
    """A check reads the notebook's names: one set earlier in the lesson would be judged as
    the student's answer before they wrote any."""
    code = [c for c in cells(path) if c["cell_type"] == "code"]
    for i, cell in enumerate(code):
        match = CHECK_CALL.match(source(cell).strip())
        if not match:
            continue
        answer_at = i - 1
        earlier = set().union(*(_names_set(source(c)) for c in code[:answer_at]))
        clash = earlier & set(find(match[1]).reads)
        assert not clash, (f"{path.name}: exercise {match[1]} reads {sorted(clash)}, which "
                           "the lesson sets before its answer cell; rename the answer")


# ------------------------------------------------------------------- every exercise's table
def test_every_exercise_knows_at_least_two_mistakes():
    few = [e.id for e in EXERCISES if len(e.mistakes) < 2]
    assert not few, f"exercises with fewer than 2 diagnosed mistakes: {few}"


@pytest.mark.parametrize("exercise, index", MISTAKES,
                         ids=[f"{e.id}-{i}" for e, i in MISTAKES])
def test_each_known_mistake_earns_its_hint(exercise, index):
    mistake = exercise.mistakes[index]
    with pytest.raises(ExerciseNotPassed) as failure:
        exercise.verify(mistake.example_answer())
    assert not isinstance(failure.value, NotAttempted)
    assert failure.value.line == f"✗ {exercise.id}: {mistake.hint}", (
        f"exercise {exercise.id}: the example of mistake {index} got another line:\n"
        f"{failure.value.line}")


@pytest.mark.parametrize("exercise", EXERCISES, ids=ids)
def test_an_untouched_answer_is_not_attempted(exercise):
    for namespace in ({}, {name: ... for name in exercise.reads},
                      {name: None for name in exercise.reads}):
        with pytest.raises(NotAttempted, match=rf"^{re.escape(exercise.id)} not attempted yet"):
            exercise.verify(namespace)


SEVERAL_NAMES = [e for e in EXERCISES if len(e.reads) > 1]


@pytest.mark.parametrize("exercise", SEVERAL_NAMES, ids=ids)
def test_an_answer_that_sets_some_names_is_begun_not_unattempted(exercise):
    """The stub is gone and the cell set the first name, then stopped (an error, or a name
    left out): the student did attempt it, and is told which names are missing."""
    first, *rest = exercise.reads
    begun = {first: exercise.right_answer().get(first, 1.0)}
    with pytest.raises(ExerciseNotPassed) as failure:
        exercise.verify(begun)
    assert not isinstance(failure.value, NotAttempted)
    listed = rest[0] if len(rest) == 1 else ", ".join(rest[:-1]) + " and " + rest[-1]
    assert failure.value.line.startswith(f"✗ {exercise.id}: {listed} "), failure.value.line
    assert "not set yet" in failure.value.line


def _stub(*args, **kwargs):
    raise NotImplementedError()


FUNCTION_EXERCISES = [e for e in EXERCISES if function in e.reads.values()]


@pytest.mark.parametrize("exercise", FUNCTION_EXERCISES, ids=ids)
def test_the_stubs_not_implemented_error_is_not_attempted(exercise):
    """A function (or class) whose body is still nbgrader's stub."""
    example = exercise.mistakes[0].example_answer()
    for name, reader in exercise.reads.items():
        if reader is not function:
            continue
        stub = _stub
        if isinstance(example[name], type):     # a class: its methods are the stubs
            stub = type(name, example[name].__mro__[1:2], {
                attr: _stub for attr, value in vars(example[name]).items() if callable(value)})
        with pytest.raises(NotAttempted):
            exercise.verify({**example, name: stub})


ODD_ANSWERS = {
    "a list": [1.0, 2.0],
    "text": "3",
    "an array of the wrong shape": np.zeros((2, 7)),
    "a bool": True,
    "nan": float("nan"),
    "a complex number": 1 + 2j,
    "a tensor": eg.tensor([1.0, 2.0, 3.0]),
    "an object": object(),
    "a function": lambda *a: 0.0,
    "a function that raises": lambda *a: 1 / 0,
}


@pytest.mark.parametrize("exercise", EXERCISES, ids=ids)
@pytest.mark.parametrize("odd", list(ODD_ANSWERS), ids=str)
def test_wrongly_typed_answers_get_one_line_not_a_traceback(exercise, odd):
    base = exercise.mistakes[0].example_answer()
    for name in exercise.reads:
        with pytest.raises(ExerciseNotPassed) as failure:
            exercise.verify({**base, name: ODD_ANSWERS[odd]})
        line = failure.value.line
        assert "\n" not in line and line.startswith(f"✗ {exercise.id}: "), line
        assert failure.value._render_traceback_() == shown(line).split("\n")   # no traceback


def test_a_symbolic_tensor_is_explained():
    exercise = find("1.2")
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=())
        with pytest.raises(ExerciseNotPassed) as failure:
            exercise.verify({"dh_dx": x, "dh_dy": 1.0})
    assert re.search("symbolic tensor .*Session", failure.value.line)


# ------------------------------------------------------------ check() and progress() as used
def test_check_reads_the_callers_names_prints_a_pass_and_progress_counts_it(capsys):
    _results.clear()
    namespace = dict(find("1.2").right_answer())
    exec('check("1.2")', {"check": check, **namespace})
    assert capsys.readouterr().out.startswith("✓ 1.2: ")
    with pytest.raises(NotAttempted) as failure:
        exec('check("1.3")', {"check": check})
    assert isinstance(failure.value, AssertionError)     # nbgrader: the cell earns no points
    with pytest.raises(ExerciseNotPassed):
        check("1.1", dict.fromkeys(find("1.1").reads, 1.0))
    progress(1)
    assert capsys.readouterr().out == (    # wrapped between exercises, never inside one
        "1 of 7 done: 1.1 ✗  1.2 ✓  1.3 not attempted  1.4 not attempted\n"
        "  1.5 not attempted  1.6 not attempted  1.7 not attempted\n")
    _results.clear()


def test_a_checks_line_is_shown_wrapped_at_78_characters_and_whole():
    """VS Code and nbgrader's feedback pages show an output line as it is, running off the
    right edge: every hint and pass line is wrapped, each piece at most WIDTH characters (a
    single longer word or `code span` stays whole), continued with an indent, nothing lost."""
    lines = [f"✗ {e.id}: {m.hint}" for e in EXERCISES for m in e.mistakes]
    lines += [f"✗ {e.id}: not right yet. {e.expected}" for e in EXERCISES]
    for exercise in EXERCISES:                      # "replace `raise NotImplementedError()`"
        with pytest.raises(NotAttempted) as failure:
            exercise.verify({})
        lines.append(failure.value.line)
    assert max(map(len, lines)) > 2 * WIDTH                 # (hints that need wrapping)
    for line in lines:
        pieces = shown(line).split("\n")
        unbreakable = r"(\S|`[^`]*`)+"                          # a word, a code span
        assert all(len(p) <= WIDTH or re.fullmatch(unbreakable, p.strip()) for p in pieces), \
            pieces
        assert all(p.startswith("  ") and not p.startswith("   ") for p in pieces[1:]), pieces
        assert " ".join(p.strip() for p in pieces) == " ".join(line.split()), line
        if line.count("`") % 2 == 0:                            # a `code span` never split
            assert all(p.count("`") % 2 == 0 for p in pieces), pieces
    failure = ExerciseNotPassed(lines[0])
    assert str(failure) == shown(lines[0]) and failure.line == lines[0]


def test_an_unknown_exercise_id_is_a_clear_error():
    with pytest.raises(ValueError, match="lesson 1 has no exercise '1.99'; it has 1.1, 1.2"):
        check("1.99", {})
    with pytest.raises(ValueError, match="lesson 99 has no checked exercises"):
        check("99.1", {})


def test_a_generic_wrong_answer_says_which_names_are_right_but_not_the_values():
    right = find("1.1").right_answer()
    wrong = {**right, "df1_dx": right["df1_dx"] + 0.7}
    with pytest.raises(ExerciseNotPassed) as failure:
        find("1.1").verify(wrong)
    line = failure.value.line
    assert "df1_dx is not" in line and "q1, z1, f1, df1_dw and df1_db are right" in line
    assert f" {right['df1_dx']:g}" not in line and f"={right['df1_dx']:g}" not in line


@pytest.mark.parametrize("answer_cell, error", [
    ("dh_dx = 2.0\ndh_dy = (3.0", "SyntaxError: '(' was never closed, line 2: dh_dy = (3.0"),
    ("if True:\ndh_dx = 2.0\ndh_dy = 3.0",
     "IndentationError: expected an indented block after 'if' statement on line 1, line 2: "
     "dh_dx = 2.0"),
])
def test_an_answer_cell_python_cannot_read_is_said_so_with_its_line(answer_cell, error):
    """A SyntaxError leaves every name unset: the check says the answer cell did not run,
    and where, instead of 'not attempted' (IPython's input history, _ih, holds the cell)."""
    history = ["", "import edugraph as eg", answer_cell, 'check("1.2")']
    with pytest.raises(ExerciseNotPassed) as failure:
        find("1.2").verify({"_ih": history})
    assert not isinstance(failure.value, NotAttempted)
    assert failure.value.line == (
        f"✗ 1.2: your answer cell did not run: Python could not read it ({error}). Fix that "
        "line, run the cell again, then this check.")
    stub = "# YOUR CODE HERE\nraise NotImplementedError()"       # untouched: not attempted
    with pytest.raises(NotAttempted):
        find("1.2").verify({"_ih": ["", stub, 'check("1.2")']})


def test_a_check_in_a_kernel_reads_an_unreadable_answer_cell_from_the_history():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_cell("from edugraph.exercises import check", store_history=True)
    shell.run_cell("dg_da = 6.0\ndg_db = 3.0)", store_history=True)
    result = shell.run_cell('check("1.3")', store_history=True)
    assert isinstance(result.error_in_exec, ExerciseNotPassed)
    assert "your answer cell did not run" in result.error_in_exec.line
    assert "line 2: dg_db = 3.0)" in result.error_in_exec.line
