"""From a Python function to its converted twin: source → ``ast`` → rewritten → compiled.

The converted function must behave as the original in everything but its control flow: the
same globals (the module's own dictionary, so later changes are seen), the same closure
cells (so ``nonlocal`` variables and variables of an enclosing function are shared, not
copied), the same defaults. So the rewritten ``def`` is compiled inside a factory function
whose parameters are the original's free variables, and the new function is assembled from
the compiled code with the original's cells — nothing of the user's code runs here.
"""
import ast
import inspect
import textwrap
import types
import weakref

from . import operators
from .transformer import AG, Converter, convertible

CONVERTED = "ag__converted"      # the converted def's name in the factory that compiles it

_conversions = weakref.WeakKeyDictionary()     # function → (converted or None, source text)


def convert(fn):
    """``fn`` with its ``if``/``while``/``for`` statements converted; ``fn`` itself when it
    has none or its source cannot be read (a lambda, a function made by ``exec``)."""
    if isinstance(fn, types.MethodType):
        function = convert(fn.__func__)
        return fn if function is fn.__func__ else types.MethodType(function, fn.__self__)
    if not isinstance(fn, types.FunctionType) or getattr(fn, "autograph_skip", False):
        return fn
    converted, _ = _conversion(fn)
    return fn if converted is None else converted


def source(fn):
    """The converted source of ``fn`` (its own source when there is nothing to convert)."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    fn = getattr(fn, "python_function", fn)     # an eg.function
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"to_code needs a Python function (or an eg.function), not "
                        f"{type(fn).__name__}.")
    _, text = _conversion(fn)
    if text is None:
        raise ValueError(f"The source of {fn.__qualname__} cannot be read (a lambda, or a "
                         "function made by exec), so AutoGraph leaves it as it is.")
    return text


def _conversion(fn):
    if fn not in _conversions:
        _conversions[fn] = _convert(fn)
    return _conversions[fn]


def _convert(fn):
    try:
        node = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None, None
    if not isinstance(node, ast.FunctionDef) or node.name != fn.__name__:
        return None, None                           # (a lambda's line, or a renamed def)
    if not convertible(node):
        node.decorator_list = []
        return None, ast.unparse(node)
    ast.increment_lineno(node, fn.__code__.co_firstlineno - 1)     # (the file's line numbers)
    Converter(node).convert()
    text = ast.unparse(node)
    freevars = fn.__code__.co_freevars
    node.name = CONVERTED     # (under its own name, the def would make a module-level function's
                              # call to itself a free variable of the factory with no cell)
    factory = ast.FunctionDef(
        "ag__factory", ast.arguments([], [ast.arg(n) for n in (AG,) + freevars], None, [], [],
                                     None, []),
        [node, ast.Return(ast.Name(CONVERTED, ast.Load()))], [], None)
    module = ast.fix_missing_locations(ast.Module([factory], []))
    namespace = {}
    exec(compile(module, fn.__code__.co_filename, "exec"), namespace)   # defines the factory
    code = next(c for c in namespace["ag__factory"].__code__.co_consts
                if isinstance(c, types.CodeType) and c.co_name == CONVERTED)
    code = code.replace(co_name=fn.__name__, co_qualname=fn.__qualname__)
    cells = dict(zip(freevars, fn.__closure__ or ()))
    cells[AG] = types.CellType(operators)
    converted = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                                   tuple(cells[n] for n in code.co_freevars))
    converted.__kwdefaults__, converted.__qualname__ = fn.__kwdefaults__, fn.__qualname__
    converted.__doc__, converted.__module__ = fn.__doc__, fn.__module__
    converted.__annotations__ = fn.__annotations__
    return converted, text
