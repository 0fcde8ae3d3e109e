"""Reading a student's answer: each reader turns what the notebook holds into a plain value, or
refuses it with a sentence that says what form was expected (never a traceback).

A reader is called as ``reader(value, name)``; it returns the plain value or raises
``WrongForm``. The answer ``...`` or ``None`` never reaches a reader: the runner reads it as
"not attempted yet".
"""
import numbers

import numpy as np

from ..tensor import Tensor


class WrongForm(Exception):
    """The answer is not of the form the exercise asks for; the message says what to change."""


def describe(value):
    """A few words for what the student gave: 'a list of 2 items', 'a str', 'a Tensor'."""
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)} item{'s' * (len(value) != 1)}"
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape}"
    if isinstance(value, Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    if isinstance(value, type):
        return f"the class {value.__name__}"
    if callable(value) and hasattr(value, "__name__"):     # (its repr is a memory address)
        return f"the function {value.__name__}"
    kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} ({value!r:.40})"




NO_RETURN = "no `return` line ran (is it missing, or does an `if` leave this case out?)."


def returned(value, call):
    """What the student's function returned, from ``call`` (as the message names it); None
    is refused, with what a function that gives None usually lacks."""
    if value is None:
        raise WrongForm(f"{call} returned None: {NO_RETURN}")
    return value


def _host_array(value, name):
    """An eager tensor, a Variable or array-like data as a float64 numpy array."""
    if isinstance(value, Tensor):
        if value.graph is not None:
            raise WrongForm(
                f"{name} is a symbolic tensor of a graph ({value.name}): it has no value until "
                "a Session runs it. Give the value instead, e.g. sess.run(...).")
        value = value.numpy()
    if value is None:
        raise WrongForm(f"{name} is None: {NO_RETURN}")
    if isinstance(value, (str, bytes)):
        raise WrongForm(f"{name} is text ({value!r:.40}); write the number itself, without "
                        "quotes.")
    if isinstance(value, (bool, np.bool_)):
        raise WrongForm(f"{name} is {value}, a yes/no value; a number is asked for.")
    if isinstance(value, (list, tuple)) and any(isinstance(v, (str, bytes)) for v in value):
        text = next(v for v in value if isinstance(v, (str, bytes)))
        raise WrongForm(f"{name} holds text ({text!r:.20}); write the numbers themselves, "
                        "without quotes.")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise WrongForm(f"{name} is {describe(value)}, which is not made of numbers.") from None
    if not np.isfinite(array).all():
        raise WrongForm(f"{name} holds nan or inf: the computation behind it diverged or "
                        "divided by zero.")
    return array


def number(value, name):
    """One real number: an int or float, a numpy scalar, or a tensor or array of one value."""
    if isinstance(value, complex):
        raise WrongForm(f"{name} is a complex number; a real number is asked for.")
    if isinstance(value, (list, tuple)):
        raise WrongForm(f"{name} should be one number, not {describe(value)}.")
    array = _host_array(value, name)
    if array.size != 1:
        raise WrongForm(f"{name} should be one number, not {describe(value)}.")
    if array.ndim:      # [3.0] is refused above; np.array([3.0]) is the same answer
        raise WrongForm(f"{name} should be one number, not {describe(value)} holding one: "
                        f"take the number out of it with .item().")
    return float(array.reshape(()))


def whole_number(value, name):
    """A count: a whole number (an int, or a float such as 3.0)."""
    x = number(value, name)
    if x != round(x):
        raise WrongForm(f"{name} is {x:g}; a whole number (a count) is asked for.")
    return int(round(x))


def shape(value, name):
    """A shape: a tuple (or list) of whole numbers, or a tensor's or array's ``.shape``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)) and \
            not hasattr(value, "__len__"):
        raise WrongForm(f"{name} should be a shape, a tuple of whole numbers such as (2, 3); "
                        f"it is {describe(value)}.")
    sizes = tuple(value)
    floats = [s for s in sizes if isinstance(s, float)]
    if floats and all(f == round(f) for f in floats):
        raise WrongForm(f"{name} holds floats ({floats[0]!r}): a shape's sizes are whole "
                        f"numbers, written without a decimal point, e.g. {int(floats[0])}.")
    if not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0
               for s in sizes):
        raise WrongForm(f"{name} should be a shape, a tuple of whole numbers such as (2, 3); "
                        f"it is {describe(value)}.")
    return tuple(int(s) for s in sizes)


def array(value, name):
    """Numbers of any shape (a list, a numpy array, an eager tensor) as a float64 array."""
    return _host_array(value, name)


def function(value, name):
    """Something to call: a function (or a class) the student wrote."""
    if not callable(value):
        made = type(value).__name__
        if type(value).__module__ == "__main__":        # (a class written in the notebook)
            raise WrongForm(f"{name} should be the class itself; it is an instance of it "
                            f"({made}()). Write `class {name}(...)` and leave the call out.")
        raise WrongForm(f"{name} should be a function you define with def (or a class); it is "
                        f"{describe(value)}.")
    return value


def choice(*options):
    """A reader for one of a few named options, e.g. ``choice("x", "y", "both")``. (Only a
    value of an option's own type is compared: an array or a tensor answer is refused, not
    compared elementwise.)"""
    def read(value, name):
        if isinstance(value, str):      # 'Parallel map', 'parallel_map': the same choice
            said = " ".join(value.lower().replace("_", " ").replace("-", " ").split())
            value = next((o for o in options if isinstance(o, str) and o == said), value)
        if not any(type(value) is type(o) and value == o for o in options):
            listed = [repr(o) for o in options]
            listed = ", ".join(listed[:-1]) + " or " + listed[-1] if len(listed) > 1 \
                else listed[0]
            raise WrongForm(f"{name} should be {listed}; it is {describe(value)}.")
        return value
    read.__doc__ = f"One of {options}."
    return read


def close(got, expected, rtol=1e-6, atol=1e-9):
    """Whether two answers agree: numbers and arrays to a tolerance (arrays need the same
    shape), other values exactly. Dicts and tuples agree when every part does."""
    if isinstance(expected, dict):
        return (isinstance(got, dict) and got.keys() >= expected.keys()
                and all(close(got[k], expected[k], rtol, atol) for k in expected))
    if isinstance(expected, tuple) and not isinstance(expected, np.ndarray):
        return (isinstance(got, tuple) and len(got) == len(expected)
                and all(close(g, e, rtol, atol) for g, e in zip(got, expected)))
    if isinstance(expected, (numbers.Real, np.ndarray)) and not isinstance(expected, bool):
        try:
            got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, np.float64)
        except (TypeError, ValueError):
            return False
        return got.shape == expected.shape and np.allclose(got, expected, rtol=rtol, atol=atol)
    return got == expected
