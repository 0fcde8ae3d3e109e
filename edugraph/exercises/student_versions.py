"""Write the student versions of the lessons: ``python -m edugraph.exercises.student_versions``.

``lessons/NN_name.ipynb`` (solved) gives ``lessons/student/NN_name.ipynb``: what
``nbgrader generate_assignment`` would release, made by nbgrader's own preprocessors (the
same ones, without a course database): solutions between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` become nbgrader's stub, outputs are cleared, check cells stay locked
and carry checksums. A short note at the top links back to the solved lesson, and a link
to another notebook opens the same file as in the solved lesson (the start page's table of
solved lessons and student versions works from both folders).

``--check`` writes nothing and fails if a student version is missing or stale (the tests
run it). nbgrader comes with the ``teach`` extra: ``pip install -e ".[teach]"``.
"""
import argparse
import posixpath
import re
import sys
from pathlib import Path

import nbformat

LESSONS = Path("lessons")          # run from the repository's root

NOTE = """**Student version** of [{title}](../{name}), which has the reference
answers. Write your answer wherever an exercise's cell says
`raise NotImplementedError()` (delete that line), then run the check cell
below it. The last cell shows which exercises you have done."""


def student_version(solved):
    """The student version of a solved lesson (a notebook node; the input is not changed)."""
    from nbgrader.preprocessors import (CheckCellMetadata, ClearOutput, ClearSolutions,
                                        ComputeChecksums, LockCells)
    nb = nbformat.from_dict(solved)
    resources = {}
    clear_output = ClearOutput(remove_metadata_fields={"collapsed", "scrolled", "execution"})
    for step in (LockCells(), ClearSolutions(), clear_output, CheckCellMetadata(),
                 ComputeChecksums()):
        nb, resources = step.preprocess(nb, resources)
    return nb


# a markdown link: [text](target)
_LINK = re.compile(r"\[([^\]]*)\](\()([^)\s]+)\)")


def _seen_from_student_folder(target):
    """``target``, a link written in a solved lesson, as seen from ``student/``: the same
    file. Web addresses and anchors in the page stay as they are."""
    if re.match(r"[a-z][a-z0-9+.-]*:|#|/", target):
        return target
    return posixpath.relpath(posixpath.normpath(target), "student")


def links_from_student_folder(nb, name):
    """``nb``, the student version of lesson ``name`` (changed in place), with its markdown
    links written for the ``student/`` folder; a link to this very page (the solved lesson's
    "the student version of this page") keeps its words and loses the link."""
    def relinked(link):
        target = _seen_from_student_folder(link[3])
        return link[1] if target == name else f"[{link[1]}]({target})"
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _LINK.sub(relinked, cell.source)
    return nb


def _with_note(nb, name):
    title = nb.cells[0].source.splitlines()[0].lstrip("# ").strip()
    note = nbformat.v4.new_markdown_cell(NOTE.format(title=title, name=name))
    note.id = "student-version-note"
    nb.cells.insert(1, note)
    return nb


def solved_lessons(folder=LESSONS):
    return sorted(folder.glob("[0-9][0-9]_*.ipynb"))


def render(path):
    """The text of the student version of the solved lesson at ``path``."""
    solved = nbformat.read(path, as_version=4)
    student = links_from_student_folder(student_version(solved), path.name)
    return nbformat.writes(_with_note(student, path.name)) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; fail if a student version is missing or stale")
    parser.add_argument("--lessons", type=Path, default=LESSONS, help="the solved lessons' folder")
    parser.add_argument("only", nargs="*", type=Path,
                        help="solved lessons to write (default: all of them)")
    args = parser.parse_args(argv)
    out = args.lessons / "student"
    stale = []
    for path in solved_lessons(args.lessons):
        if args.only and path.resolve() not in {p.resolve() for p in args.only}:
            continue
        target = out / path.name
        text = render(path)
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(target)
        if not args.check:
            out.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
    extra = sorted({p.name for p in out.glob("*.ipynb")} -
                   {p.name for p in solved_lessons(args.lessons)}) if out.exists() else []
    if args.check:
        if stale or extra:
            print("Student versions out of date: "
                  + ", ".join([str(p.relative_to(args.lessons)) for p in stale]
                              + [f"student/{n} (no solved lesson)" for n in extra])
                  + ". Run: python -m edugraph.exercises.student_versions", file=sys.stderr)
            return 1
        print(f"{len(solved_lessons(args.lessons))} student versions up to date.")
        return 0
    for name in extra if not args.only else ():
        (out / name).unlink()
    print(f"wrote {len(stale)} of {len(solved_lessons(args.lessons))} student versions to {out}"
          + (f"; removed {', '.join(extra)}" if extra else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
