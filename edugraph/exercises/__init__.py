"""Checked exercises for the lessons: ``check("1.2")`` and ``progress(1)`` in a notebook.

Each lesson's exercises are data in ``lessonNN.py``; ``checking.py`` holds the one mechanism
that checks any of them, ``answers.py`` the readers that turn an answer into plain values.
``python -m edugraph.exercises.student_versions`` writes the student notebooks (nbgrader).
"""
from .answers import WrongForm
from .checking import Exercise, ExerciseNotPassed, Mistake, NotAttempted, check, progress

__all__ = ["Exercise", "ExerciseNotPassed", "Mistake", "NotAttempted", "WrongForm", "check",
           "progress"]
