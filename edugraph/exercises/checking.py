"""One mechanism checks every exercise: the exercise is data, ``Exercise.verify`` runs it.

An exercise names what the student sets (``reads``), computes its reference answer (with
edugraph or numpy, never a pasted number) and lists known mistakes, each a predicate on the
answer with the hint it earns. Checking an answer goes:

1. not attempted (a name still ``...``, ``None`` or unset, or the stub's
   ``NotImplementedError``)  →  one friendly line;
2. read each name into a plain value; a wrong form (a list for a number...) → what to change;
3. right (close to the reference) → one line saying what was verified;
4. a known mistake → its hint;
5. anything else → the form that was expected, and which names are right, never the value.

Anything short of right raises ``ExerciseNotPassed``, an ``AssertionError``: nbgrader gives
a check cell its points only when it runs without an error. IPython shows the exception's
``_render_traceback_()`` instead of a traceback, so the student reads the line alone,
wrapped (``shown``).
"""
import importlib
import os
import re
import sys
import textwrap
import traceback
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .answers import WrongForm, close


WIDTH = 78      # the lessons' code lines: VS Code and nbgrader's feedback pages do not wrap
                # output, so a check's line is wrapped before it is shown
NO_BREAK = "\N{NO-BREAK SPACE}"        # (textwrap breaks lines at ASCII spaces only)


def shown(line):
    """A check's line as the student reads it: wrapped at ``WIDTH`` characters, the lines after
    the first indented, so that a hint reads whole in any notebook frontend. A `code span`
    stays on one line (so does a no-break space)."""
    kept = re.sub(r"`[^`\n]*`", lambda span: span.group().replace(" ", NO_BREAK), line)
    return "\n".join(textwrap.fill(part, WIDTH, subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False)
                     for part in kept.split("\n")).replace(NO_BREAK, " ")


class ExerciseNotPassed(AssertionError):
    """An exercise that is not (yet) right. Its whole message is one line for the student."""

    def __init__(self, line):
        super().__init__(line)
        self.line = line

    def __str__(self):
        return shown(self.line)

    def _render_traceback_(self):       # IPython displays these lines instead of a traceback
        return str(self).split("\n")


class NotAttempted(ExerciseNotPassed):
    """The answer is still the stub: nothing to judge yet."""


@dataclass(frozen=True)
class Mistake:
    """A known mistake: the hint it earns, and how to recognise it.

    ``gives()`` computes the answer this mistake produces (like the reference, as ``run``
    returns it); an answer close to it earns the hint. ``when(got, reference)`` is any other
    test of the answer. ``example`` is what a student making the mistake would set (a dict
    of names, or a function returning one); the tests feed it in and expect the hint.
    """
    hint: str
    gives: Callable[[], dict] | None = None
    when: Callable[[dict, dict], bool] | None = None
    example: dict | Callable[[], dict] | None = None

    def matches(self, got, reference, rtol, atol):
        try:
            if self.gives is not None:
                return close(got, self.gives(), rtol, atol)
            return bool(self.when(got, reference))
        except Exception:           # a predicate written for one form of answer: not this one
            return False

    def example_answer(self):
        """What a student making this mistake sets (for the tests)."""
        example = self.example if self.example is not None else self.gives
        return example() if callable(example) else dict(example)


@dataclass
class Exercise:
    """One checked exercise.

    ``id``: "1.2" (lesson 1, exercise 2). ``reads``: the names the student sets, each with
    its reader (``answers.number``...). ``reference()``: the right answer, as ``run``
    returns it. ``run(answer)``: turns the read names into what is compared (calls the
    student's function on test inputs, say); without it the names are compared. ``passed``:
    the line a right answer earns, a format string over the answer's names or a function of
    the answer. ``expected``: the form a right answer takes, said to other wrong answers.
    """
    id: str
    reads: dict
    reference: Callable[[], dict]
    passed: str | Callable[[dict], str]
    expected: str
    mistakes: tuple = ()
    run: Callable[[dict], dict] | None = None
    rtol: float = 1e-6
    atol: float = 1e-9
    # each mistake concerns one name (its hint starts with it): every wrong name's hint is
    # shown, not only the first one's
    hints_per_name: bool = False
    _reference: dict | None = field(default=None, init=False, repr=False)

    def verify(self, namespace):
        """The line a right answer earns; anything else raises ``ExerciseNotPassed``."""
        unset = [name for name in self.reads if _unset(namespace.get(name))]
        if len(unset) == len(self.reads):
            unreadable = _answer_cell_not_read(namespace, self.reads)
            if unreadable:              # answered, but Python could not read the answer
                raise ExerciseNotPassed(f"✗ {self.id}: {unreadable}")
            raise NotAttempted(f"{self.id} not attempted yet: {_what_to_do(unset)}")
        if unset:               # begun: the stub is gone, but the cell stopped or left some out
            raise ExerciseNotPassed(
                f"✗ {self.id}: {_listed(unset)} {'is' if len(unset) == 1 else 'are'} not set "
                "yet. Set every name the exercise asks for in your answer cell, and run it to "
                "the end (an error in it stops the names after it from being set).")
        try:
            answer = {name: read(namespace[name], name) for name, read in self.reads.items()}
            got = self.run(answer) if self.run else answer
        except WrongForm as e:
            raise ExerciseNotPassed(f"✗ {self.id}: {e}") from None
        except NotImplementedError as e:
            if not e.args:          # the stub's `raise NotImplementedError()`
                raise NotAttempted(f"{self.id} not attempted yet: {_what_to_do(self.reads)}")\
                    from None
            raise ExerciseNotPassed(f"✗ {self.id}: {what_went_wrong(e)}") from None
        except Exception as e:
            raise ExerciseNotPassed(f"✗ {self.id}: {what_went_wrong(e)}") from None
        reference = self.right_answer()
        if close(got, reference, self.rtol, self.atol):
            shown = {**answer, **got} if isinstance(got, dict) else answer
            return f"✓ {self.id}: " + (self.passed(shown) if callable(self.passed)
                                       else self.passed.format(**shown))
        matched = [m.hint for m in self.mistakes
                   if m.matches(got, reference, self.rtol, self.atol)]
        if matched and self.hints_per_name:
            raise ExerciseNotPassed(f"✗ {self.id}: " + self._every_names_hint(matched, got))
        if matched:
            raise ExerciseNotPassed(f"✗ {self.id}: {matched[0]}")
        raise ExerciseNotPassed(f"✗ {self.id}: not right yet. {self.expected}"
                                + _which_are_right(got, reference, self))

    def _every_names_hint(self, hints, got):
        """The first hint for each name that earned one, and the wrong names that did not."""
        first = {}
        for hint in hints:
            first.setdefault(hint.split()[0].rstrip(":"), hint)
        reference = self.right_answer()
        unexplained = [n for n in self.reads if n not in first and n in reference
                       and not close(got[n], reference[n], self.rtol, self.atol)]
        return " Also, ".join(first.values()) + (
            f" ({_listed(unexplained)} {'is' if len(unexplained) == 1 else 'are'} not right "
            "either.)" if unexplained else "")

    def right_answer(self):
        """The reference answer, computed once."""
        if self._reference is None:
            self._reference = self.reference()
        return self._reference


def _unset(value):
    return value is None or value is Ellipsis


def _answer_cell_not_read(namespace, names):
    """Why the answer cell did not run, where Python could not read it (a SyntaxError or an
    IndentationError leaves every name unset, and nothing says so but the cell's own
    output): the cell is the latest in IPython's input history (``_ih``) before this check
    that names an answer or still holds the stub. None where there is no such history (a
    namespace in the tests) or the cell compiles."""
    history = namespace.get("_ih")
    if not isinstance(history, list) or len(history) < 2:
        return None
    named = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b|YOUR CODE HERE")
    cell = next((c for c in reversed(history[:-1]) if isinstance(c, str) and named.search(c)
                 and not re.fullmatch(r"\s*(check|progress)\(.*\)\s*", c)), None)
    if cell is None:
        return None
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        code = TransformerManager().transform_cell(cell)    # (magics, as IPython runs them)
    except Exception:           # no IPython, or a cell it cannot transform: read it as it is
        code = cell
    try:
        compile(code, "<answer cell>", "exec")
    except SyntaxError as e:
        line = (e.text or "").strip()
        return (f"your answer cell did not run: Python could not read it ({type(e).__name__}: "
                f"{e.msg}, line {e.lineno}" + (f": {line}" if line else "") + "). Fix that "
                "line, run the cell again, then this check.")
    return None


def _listed(names):
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _what_to_do(names):
    return (f"in the cell above, replace `raise NotImplementedError()` by your answer "
            f"({_listed(names)}), run that cell, then run this check again.")


def _which_are_right(got, reference, exercise):
    """' (dh_dx is right; dh_dy is not.)' where the answer has several named parts."""
    names = [n for n in exercise.reads if isinstance(got, dict) and n in got and n in reference]
    if len(names) < 2:
        return ""
    right = [n for n in names if close(got[n], reference[n], exercise.rtol, exercise.atol)]
    wrong = [n for n in names if n not in right]
    if not right:
        return ""
    return (f" ({_listed(right)} {'is' if len(right) == 1 else 'are'} right; "
            f"{_listed(wrong)} {'is' if len(wrong) == 1 else 'are'} not.)")


_LIBRARIES = tuple(os.path.dirname(os.path.dirname(m.__file__)) + os.sep
                   for m in (np,)) + (os.path.dirname(os.path.dirname(__file__)) + os.sep,
                                      os.path.dirname(os.__file__) + os.sep)


def what_went_wrong(error):
    """'running your answer raised ZeroDivisionError: ... (in step, line 3: v = g / 0)': the
    error and the innermost line of the student's own code, where the mistake most likely is."""
    message = " ".join(str(error).split()) or "(no message)"
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith(_LIBRARIES)]
    place = ""
    if frames:
        frame = frames[-1]
        place = f" (in {frame.name}, line {frame.lineno}" + \
            (f": {frame.line.strip()})" if frame.line else ")")
    return f"running your answer raised {type(error).__name__}: {message}{place}"


# ---------------------------------------------------------------- the notebooks' two calls
_results = {}           # exercise id -> "✓", "✗" or "not attempted", for this kernel


def exercises_of(lesson):
    """The exercises of lesson ``lesson`` (a number), in order."""
    try:
        module = importlib.import_module(f"{__package__}.lesson{int(lesson):02d}")
    except ModuleNotFoundError:
        raise ValueError(f"lesson {lesson} has no checked exercises "
                         f"(no module {__package__}.lesson{int(lesson):02d}).") from None
    return module.EXERCISES


def find(exercise_id):
    """The exercise called ``exercise_id``, e.g. '1.2'."""
    lesson = str(exercise_id).split(".")[0]
    if not lesson.isdigit():
        raise ValueError(f"{exercise_id!r} is not an exercise id; ids look like '1.2'.")
    for exercise in exercises_of(lesson):
        if exercise.id == str(exercise_id):
            return exercise
    known = ", ".join(e.id for e in exercises_of(lesson))
    raise ValueError(f"lesson {lesson} has no exercise {exercise_id!r}; it has {known}.")


def check(exercise_id, namespace=None):
    """Check exercise ``exercise_id`` ('1.2') on the names the notebook set, and print what
    was verified. Anything short of right raises ``ExerciseNotPassed`` with one line that
    says what to do. (Like otter-grader's ``grader.check``, it reads the notebook's
    variables itself, so a name that was never set reads as "not attempted".)"""
    exercise = find(exercise_id)
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    try:
        line = exercise.verify(namespace)
    except ExerciseNotPassed as failure:
        _results[exercise.id] = "not attempted" if isinstance(failure, NotAttempted) else "✗"
        raise
    _results[exercise.id] = "✓"
    print(shown(line))


def progress(lesson):
    """Print which of the lesson's exercises passed in this kernel, e.g.
    '3 of 4 done: 1.1 ✓ 1.2 ✓ 1.3 ✗ 1.4 not attempted'."""
    marks = [(e.id, _results.get(e.id, "not attempted")) for e in exercises_of(lesson)]
    done = sum(mark == "✓" for _, mark in marks)
    items = (f"{i} {m}".replace(" ", NO_BREAK) for i, m in marks)   # (each kept on one line)
    print(shown(f"{done} of {len(marks)} done: " + "  ".join(items)))
