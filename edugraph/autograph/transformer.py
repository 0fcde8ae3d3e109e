"""The rewrite itself: a function's ``if``, ``while`` and ``for`` statements become calls.

Each statement becomes small functions and one call of ``operators.py`` (imported as ``ag__``)
that decides *at trace time* what to do: ordinary Python when the condition is a Python value,
``eg.cond`` / ``eg.while_loop`` when it is a tensor. The functions take the variables the
statement changes as arguments and give them back, exactly the shape of
``eg.while_loop(cond, body, loop_vars)``::

    while eg.reduce_sum(x) > 1:              def loop_test(x):
        x = eg.tanh(x)                           return eg.reduce_sum(x) > 1
                                     →       def loop_body(x):
                                                 x = eg.tanh(x)
                                                 return (x,)
                                             x, = ag__.while_stmt(loop_test, loop_body,
                                                                  (x,), ('x',))

A statement's *state* is the names it assigns that the function reads somewhere (a name
nobody reads needs no carrying). A name that may have no value yet when the statement starts
gets ``ag__.Undefined('name')`` at the top of its function, so that passing it in is legal.

``return`` inside an ``if`` is handled by moving what follows the ``if`` into the branch that
does not return, so that each branch ends in a ``return`` and the converted call is returned
(``return ag__.if_stmt(...)``). What is left alone, on purpose: ``break``, ``continue`` and
``return`` inside loops, and loops with ``else:`` (those statements stay Python, and a tensor
condition there raises an error that says so), and the functions the converted one calls.
"""
import ast
import copy
from collections import Counter

AG = "ag__"                     # the name the converted code calls the operators by
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


# ----------------------------------------------------------------------------- analysis
def bound_names(nodes):
    """Names the statements (or targets) ``nodes`` bind in their own scope, in order."""
    found = []

    def add(name):
        if name not in found:
            found.append(name)

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name)
            return
        if isinstance(node, _SCOPES):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name)
        for child in ast.iter_child_nodes(node):
            visit(child)
    for n in nodes:
        visit(n)
    return found


def reads(nodes):
    """How often each name is read in ``nodes``, nested functions included (they may run
    later and see the value). ``n += 1`` reads n too (its target is stored, not loaded)."""
    counts = Counter()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                counts[n.target.id] += 1
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                counts[n.id] += 1
    return counts


def jumps(nodes):
    """Which of 'return', 'break', 'continue' in ``nodes`` leave them (a break inside an inner
    loop, or anything inside a nested function, does not)."""
    found = set()

    def visit(node, in_loop):
        if isinstance(node, _SCOPES):
            return
        if isinstance(node, ast.Return):
            found.add("return")
        elif isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
            found.add("break" if isinstance(node, ast.Break) else "continue")
        inner = in_loop or isinstance(node, _LOOPS)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)
    for n in nodes:
        visit(n, False)
    return found


def declares_scope(nodes):
    """Does a ``global`` or ``nonlocal`` statement sit in ``nodes`` (moving it into a branch
    function would change what it means)?"""
    return any(isinstance(n, (ast.Global, ast.Nonlocal)) for node in nodes
               for n in ast.walk(node))


def attribute_stores(nodes):
    """``self.count = ...``, ``a[i] = ...``: changes to objects, not names (as source text)."""
    targets = []
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    for part in ast.walk(t):
                        if isinstance(part, (ast.Attribute, ast.Subscript)) and \
                                isinstance(part.ctx, ast.Store):
                            targets.append(ast.unparse(part))
    return tuple(dict.fromkeys(targets))


def always_returns(stmts):
    """Does every path through ``stmts`` end in ``return`` (or ``raise``)?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    return isinstance(last, ast.If) and always_returns(last.body) and \
        always_returns(last.orelse)


def convertible(func):
    """Is there anything to convert (an if, while, for or conditional expression) in the
    function's own code? Generators are left as they are."""
    def walk(node):
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                yield child
                yield from walk(child)
    found = list(walk(func))
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in found):
        return False
    return any(isinstance(n, (ast.If, ast.While, ast.For, ast.IfExp)) for n in found)


# ----------------------------------------------------------------------------- returns
def tail_returns(stmts):
    """Move what follows an ``if`` containing a ``return`` into the branches that do not
    return, so that the ``if`` ends the block: ``if c: return a`` then ``return b`` becomes
    ``if c: return a`` / ``else: return b``."""
    for k, s in enumerate(stmts):
        if isinstance(s, ast.If) and "return" in jumps([s]):
            rest = stmts[k + 1:]

            def ended(branch, rest_copy):
                branch = tail_returns(branch)
                return branch if always_returns(branch) else tail_returns(branch + rest_copy)
            body = ended(s.body, rest)
            orelse = ended(s.orelse, copy.deepcopy(rest))
            return stmts[:k] + [ast.copy_location(ast.If(s.test, body, orelse), s)]
    return stmts


def end_in_return(stmts):
    """Give every branch of a final returning ``if`` its own ``return`` (``return None``
    where the original fell off the end of the function)."""
    if stmts and isinstance(stmts[-1], ast.If) and "return" in jumps([stmts[-1]]):
        last = stmts[-1]
        for branch in (last.body, last.orelse):
            end_in_return(branch)
            if not always_returns(branch):
                branch.append(ast.copy_location(ast.Return(ast.Constant(None)), last))
    return stmts


# ----------------------------------------------------------------------------- rewriting
def _call(name, *args, **keywords):
    return ast.Call(ast.Attribute(ast.Name(AG, ast.Load()), name, ast.Load()), list(args),
                    [ast.keyword(k, v) for k, v in keywords.items()])


def _names(names, ctx):
    return ast.Tuple([ast.Name(n, ctx()) for n in names], ctx())


def _strings(names):
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _define(name, params, body, like):
    args = ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, [])
    return ast.copy_location(ast.FunctionDef(name, args, body or [ast.Pass()], [], None), like)


def _result(call, state, like):
    """``a, b = call`` (or just the call when nothing is carried)."""
    node = ast.Assign([_names(state, ast.Store)], call) if state else ast.Expr(call)
    return ast.copy_location(node, like)


class _Scope:
    """One function of the converted code: the names surely bound so far, and the names that
    need ``name = ag__.Undefined('name')`` at its top."""

    def __init__(self, bound, inits=None):
        self.bound, self.inits = set(bound), [] if inits is None else inits

    def nested(self):
        """A block inside the same function that may not run (try, with)."""
        return _Scope(self.bound, self.inits)

    def carry(self, names, declared):
        for n in names:
            if n not in self.bound and n not in declared and n not in self.inits:
                self.inits.append(n)
        self.bound |= set(names)

    def with_inits(self, body):
        inits = [ast.Assign([ast.Name(n, ast.Store())], _call("Undefined", ast.Constant(n)))
                 for n in self.inits]
        docstring = body[:1] if body and isinstance(body[0], ast.Expr) and \
            isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str) \
            else []
        return docstring + inits + body[len(docstring):]


class Converter:
    """Rewrites one ``ast.FunctionDef`` in place (see the module docstring)."""

    def __init__(self, func):
        self.func = func
        self.taken = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)} | \
            {a.arg for a in ast.walk(func) if isinstance(a, ast.arg)}
        self.declared = {name for n in ast.walk(func) if isinstance(n, (ast.Global,
                                                                        ast.Nonlocal))
                         for name in n.names}
        self.read_counts = reads(func.body)

    def convert(self):
        func = self.func
        params = [a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs]
        params += [a.arg for a in (func.args.vararg, func.args.kwarg) if a is not None]
        scope = _Scope(params)
        body = self.block(end_in_return(tail_returns(func.body)), scope, tail=True)
        func.body = scope.with_inits(body)
        func.decorator_list = []
        return ast.fix_missing_locations(func)

    def fresh(self, base):
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def live(self, names, inside=()):
        """The names among ``names`` read somewhere, reads inside ``inside`` not counted."""
        counts = self.read_counts - reads(inside) if inside else self.read_counts
        return [n for n in names if counts[n] > 0]

    # --------------------------------------------------------------- blocks
    def block(self, stmts, scope, tail=False):
        out = []
        for k, s in enumerate(stmts):
            if isinstance(s, ast.If):
                out += self.if_(s, scope, tail and k == len(stmts) - 1)
            elif isinstance(s, ast.While):
                out += self.while_(s, scope)
            elif isinstance(s, ast.For):
                out += self.for_(s, scope)
            else:
                self.expressions(s)
                if isinstance(s, (ast.With, ast.AsyncWith)):
                    scope.bound |= set(bound_names(s.items))
                    s.body = self.block(s.body, scope)          # (runs whenever the with does)
                else:
                    for field in ("body", "orelse", "finalbody"):
                        if isinstance(getattr(s, field, None), list) and not \
                                isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.ClassDef)):
                            setattr(s, field, self.block(getattr(s, field), scope.nested()))
                    for handler in getattr(s, "handlers", []):
                        handler.body = self.block(handler.body, scope.nested())
                    if not isinstance(s, (ast.Try, ast.AsyncFor, ast.Match)):
                        scope.bound |= set(bound_names([s]))
                out.append(s)
        return out

    def expressions(self, node):
        """Conditional expressions (``a if t else b``) inside a simple statement."""
        _IfExps(self).visit(node)

    def test(self, node):
        """A condition: ``and``, ``or`` and ``not`` become calls that also work on tensors."""
        if isinstance(node, ast.BoolOp):
            name = "and_" if isinstance(node.op, ast.And) else "or_"
            return _call(name, *[ast.Lambda(_no_args(), self.test(v)) for v in node.values])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _call("not_", self.test(node.operand))
        return _IfExps(self).visit(node)

    def guarded(self, s, field, what, scope):
        """A statement left as Python: its condition (or iterable) must not be a tensor."""
        setattr(s, field, _call("python_only", self.test(getattr(s, field))
                                if field == "test" else getattr(s, field),
                                ast.Constant(f"{what} (line {s.lineno})")))
        for name in ("body", "orelse"):
            setattr(s, name, self.block(getattr(s, name), scope.nested()))
        return [s]

    # --------------------------------------------------------------- if
    def if_(self, s, scope, tail):
        found = jumps([s])
        if {"break", "continue"} & found or declares_scope([s]):
            return self.guarded(s, "test", "an `if` with `break`, `continue`, `global` or "
                                           "`nonlocal` in it", scope)
        returns = "return" in found
        if returns and not (tail and always_returns([s])):
            return self.guarded(s, "test", "an `if` with a `return` that does not end the "
                                           "function", scope)
        state = self.live(bound_names(s.body + s.orelse))
        names = self.fresh("if_body"), self.fresh("else_body")
        branches = []
        for name, stmts in zip(names, (s.body, s.orelse)):
            body = self.branch(stmts, state, tail=returns)
            if state and not returns:           # (a returning branch gives its value)
                body.append(ast.Return(_names(state, ast.Load)))
            branches.append(_define(name, state, body, s))
        args = [self.test(s.test), *[ast.Name(n, ast.Load()) for n in names]]
        if state:
            args.append(_names(state, ast.Load))
        changed = attribute_stores(s.body + s.orelse)
        call = _call("if_stmt", *args, **({"changes": _strings(changed)} if changed else {}))
        scope.carry(state, self.declared)
        if returns:
            return branches + [ast.copy_location(ast.Return(call), s)]
        return branches + [_result(call, state, s)]

    def branch(self, stmts, params, tail=False):
        """The body of a generated function: its own scope, ``params`` bound."""
        scope = _Scope(params)
        return scope.with_inits(self.block(stmts, scope, tail))

    # --------------------------------------------------------------- loops
    def while_(self, s, scope):
        if s.orelse or jumps(s.body) or declares_scope(s.body):
            return self.guarded(s, "test", "a `while` loop with `break`, `continue`, "
                                           "`return` or `else:`", scope)
        state = self.live(bound_names(s.body))
        test, body = self.fresh("loop_test"), self.fresh("loop_body")
        functions = [
            _define(test, state, [ast.Return(self.test(s.test))], s),
            _define(body, state, self.branch(s.body, state) +
                    [ast.Return(_names(state, ast.Load))], s)]
        scope.carry(state, self.declared)
        call = _call("while_stmt", ast.Name(test, ast.Load()), ast.Name(body, ast.Load()),
                     _names(state, ast.Load), _strings(state))
        return functions + [_result(call, state, s)]

    def for_(self, s, scope):
        if s.orelse or jumps(s.body) or declares_scope(s.body):
            return self.guarded(s, "iter", "a `for` loop with `break`, `continue`, "
                                           "`return` or `else:`", scope)
        targets = bound_names([s.target])
        # the loop variable is carried only if it is read after (or before) the loop
        state = self.live(targets, inside=s.body) + \
            [n for n in self.live(bound_names(s.body)) if n not in targets]
        name = self.fresh("loop_body")
        if isinstance(s.target, ast.Name) and s.target.id not in state:
            item, first = s.target.id, []
        else:
            item = self.fresh("itr")
            first = [ast.copy_location(ast.Assign([s.target], ast.Name(item, ast.Load())), s)]
        body = self.branch(first + s.body, [item] + state)
        function = _define(name, [item] + state, body + [ast.Return(_names(state, ast.Load))],
                           s)
        scope.carry(state, self.declared)
        call = _call("for_stmt", s.iter, ast.Name(name, ast.Load()), _names(state, ast.Load),
                     _strings(state))
        return [function, _result(call, state, s)]


def _no_args():
    return ast.arguments([], [], None, [], [], None, [])


class _IfExps(ast.NodeTransformer):
    """``a if t else b`` → ``ag__.if_exp(t, lambda: a, lambda: b)`` (not inside nested
    functions, which are not converted)."""

    def __init__(self, converter):
        self.converter = converter

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(_call("if_exp", self.converter.test(node.test),
                                       ast.Lambda(_no_args(), node.body),
                                       ast.Lambda(_no_args(), node.orelse)), node)

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef
