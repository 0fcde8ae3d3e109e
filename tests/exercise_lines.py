"""What a check cell shows a student, for the tests of each lesson's exercises."""
from edugraph.exercises import ExerciseNotPassed
from edugraph.exercises.checking import find


def line_of(exercise_id, namespace):
    """The one line the check prints for ``namespace``'s answer: ✓ and what it verified, or ✗
    and the hint."""
    try:
        return find(exercise_id).verify(namespace)
    except ExerciseNotPassed as failure:
        return failure.line


def hint_of(exercise_id, start):
    """The line of the exercise's mistake whose hint starts with ``start``."""
    hints = [m.hint for m in find(exercise_id).mistakes if m.hint.startswith(start)]
    assert len(hints) == 1, start
    return f"✗ {exercise_id}: {hints[0]}"
