"""What the picture says about an op: its sign, what its gate word means, its local rule.

These are the lecture's words, kept beside the view rather than in the ops (which compute), so
that the inspector can write them in a node, on a wire or in the detail panel. An op not listed
is drawn by its name, and its rule is its own backward: ``∂L/∂x = matmul.backward(∂L/∂y)``.

A rule is written with the names on the picture: L is the output whose gradients are shown,
y the node whose backward runs, x the input that receives. For a tensor the rule holds element
by element (⊙), and a mean of the result is given, never a product of means: the mean of a
product is not the product of the means.
"""
import numpy as np

from .numbers import number, shape_text, short

# The sign drawn inside an op's circle (the lecture's circuit diagrams).
SYMBOLS = {
    "add": "+", "add_n": "+", "sub": "−", "mul": "×", "div": "÷", "neg": "−x",
    "square": "x²", "pow": "xʸ", "sqrt": "√", "exp": "eˣ", "log": "log", "abs": "|x|",
    "maximum": "max", "minimum": "min", "max": "max", "relu": "relu", "leaky_relu": "lrelu",
    "sigmoid": "σ", "tanh": "tanh", "softmax": "smax", "log_softmax": "lsmax",
    "matmul": "@", "sum": "Σ", "mean": "mean", "where": "?:", "clip": "clip",
    "reshape": "⇄", "transpose": "ᵀ", "identity": "=", "cast": "→",
}

# What a gate word (``Op.gate``) means, in the words of the lecture.
GATES = {
    "distributes": "distributes: each input receives the upstream gradient unchanged "
                   "(an add's local gradient is 1)",
    "switches": "switches: each input receives the upstream gradient times the other input",
    "routes": "routes: the upstream gradient goes only where the value came from (the larger "
              "input of a max, the positive inputs of a relu, the picked elements); the rest "
              "receive 0",
    "copies": "copies: every element that was summed receives the upstream gradient",
}
SUMS = ("sums: this value is used by several nodes, so the gradients they send back are "
        "added")

# An elementwise op's local gradient d y / d input, one per input, with the inputs' names as
# {0}, {1}, {2} and the result as {y}; "1[...]" is 1 where the condition holds, else 0.
LOCAL = {
    "add": ("1", "1"), "sub": ("1", "−1"), "mul": ("{1}", "{0}"),
    "div": ("1/{1}", "−{0}/{1}²"), "neg": ("−1",), "square": ("2·{0}",),
    "sqrt": ("1/(2·{y})",), "exp": ("{y}",), "log": ("1/{0}",), "abs": ("sign({0})",),
    "pow": ("{1}·{0}^({1}−1)", "{y}·log {0}"),
    "maximum": ("1[{0} ≥ {1}]", "1[{1} > {0}]"), "minimum": ("1[{0} ≤ {1}]", "1[{1} < {0}]"),
    "relu": ("1[{0} > 0]",), "leaky_relu": ("1[{0} > 0] + α·1[{0} ≤ 0]",),
    "sigmoid": ("{y}·(1 − {y})",), "tanh": ("1 − {y}²",), "identity": ("1",),
    "cast": ("1",), "clip": ("1[low ≤ {0} ≤ high]",),
    "where": (None, "1[{0}]", "1[not {0}]"),
}

# Ops whose backward is not elementwise, written with G = ∂L/∂y.
WHOLE = {
    "matmul": ("G · {1}ᵀ", "{0}ᵀ · G"),
    "sum": ("G copied to every summed element",),
    "mean": ("G / n copied to every averaged element",),
    "reshape": ("G reshaped to {0}'s shape",),
    "transpose": ("G transposed back",),
}

# ... and on a wire, for the reductions: what every element receives.
SPREAD = {"sum": "∇ to every element", "mean": "∇ / n to every element"}


def symbol(op):
    """The sign inside an op's circle: a known one, else a short op name, else ƒ."""
    if op in SYMBOLS:
        return SYMBOLS[op]
    return op if op and len(op) <= 4 else "ƒ"


def gate_note(gate, op=None):
    """What the gate word on a node means ("mul switches: ...")."""
    if gate not in GATES:
        return ""
    return f"{op} {GATES[gate]}" if op else GATES[gate]


def local_formula(op, index, names, result):
    """d y / d input ``index`` in symbols ("{1}" filled with the other input's name), or None."""
    table = LOCAL.get(op)
    if table is None or index >= len(table) or table[index] is None:
        return None
    return table[index].format(*names, y=result)


def on_wire(edge, op, names, result):
    """The rule in a few characters, written under a wire while its gradient is computed:
    the numbers for scalars ("2 × 2 = 4"), else what multiplies the upstream gradient ∇
    ("∇ ⊙ w", "∇ · kernelᵀ")."""
    if _scalar(edge):
        return result_numbers(edge, local_formula(op, edge.index, names, result) is not None)
    return _tensor_rule(edge, op, names, result) + (", then Σ" if edge.summed_axes else "")


def in_table(edge, op, names, result):
    """The rule column of ``print(view)``: the rule on the wire, said in words for a tensor,
    with one element worked out, because "5×10 μ=0.01 × 5×10 μ=0.7" would read as a product
    of means (``∇ ⊙ w, elementwise; [0, 0]: 0.01 × 0.7 = 0.007``)."""
    if _scalar(edge):
        return on_wire(edge, op, names, result)
    line = _tensor_rule(edge, op, names, result)
    local = local_formula(op, edge.index, names, result)
    if local is not None and local != "1":
        line += ", elementwise"
        if not edge.summed_axes:      # (else the element was summed with others)
            first = (0,) * edge.grad.ndim
            upstream, factor = (np.broadcast_to(a, edge.grad.shape)[first]
                                for a in (edge.upstream, edge.local))
            line += (f"; [{', '.join(map(str, first))}]: {number(upstream)} × "
                     f"{number(factor)} = {number(edge.grad[first])}")
    if edge.summed_axes:
        line += f", then summed over axes {edge.summed_axes}"
    return line


def _scalar(edge):
    """Does the gradient multiply out as scalars (``2 × 2 = 4``)?"""
    return edge.upstream.size == 1 and edge.grad.size == 1 and \
        (edge.local is None or edge.local.size == 1)


def _tensor_rule(edge, op, names, result):
    """What multiplies the upstream gradient ∇ of a tensor: "∇ ⊙ w", "∇ · wᵀ", "∇"."""
    local = local_formula(op, edge.index, names, result)
    if local is not None:
        return "∇" if local == "1" else f"∇ ⊙ {_grouped(local)}"
    if op in SPREAD:
        return SPREAD[op]
    if op in WHOLE and edge.index < len(WHOLE[op]):
        return WHOLE[op][edge.index].replace("G", "∇").format(*names)
    return f"{op}.backward(∇)"


def _grouped(formula):
    """A formula in brackets when it is a sum or a difference (∇ ⊙ (1 − y²))."""
    return f"({formula})" if (" − " in formula or " + " in formula) and \
        not formula.startswith("1[") else formula


def rule(edge, op, names, result, at_output=False):
    """How the gradient reaches one input: ``(formula, numbers)``, two lines of plain text.

    ``names``: the labels of the target's arguments; ``result``: the target's label;
    ``at_output``: the target is L itself, whose gradient is 1. For scalars the numbers
    multiply out ("2 × 2 = 4"); for a tensor they give its shape and the mean of what the
    input receives.
    """
    x = names[edge.index]
    upstream = "1" if at_output else f"∂L/∂{result}"
    local = local_formula(op, edge.index, names, result)
    scalar = edge.upstream.size == 1 and (edge.local is None or edge.local.size == 1)
    if local is not None:
        times = "×" if scalar else "⊙"
        formula = upstream if local == "1" else local if at_output else \
            f"{upstream} {times} {local}"
        how = "" if scalar else ", elementwise"
    elif op in WHOLE and edge.index < len(WHOLE[op]):
        formula, how = WHOLE[op][edge.index].replace("G", upstream).format(*names), ""
        if op == "mean":
            how = f", n = {edge.grad.size // max(1, edge.upstream.size)}"
    else:
        formula, how = f"{op}.backward({upstream})", ""
    if edge.summed_axes:
        how += f"; summed over axes {edge.summed_axes} back to {x}'s shape"
    multiplied = local is not None and scalar and edge.grad.size == 1
    return f"∂L/∂{x} = {formula}{how}", result_numbers(edge, multiplied)


def result_numbers(edge, multiplied):
    """The numbers of a rule: "2 × 2 = 4", "= 4", or a tensor's shape and mean."""
    if multiplied:
        return f"{short(edge.upstream)} × {short(edge.local)} = {short(edge.grad)}"
    if edge.grad.size == 1:
        return f"= {short(edge.grad)}"
    return (f"{shape_text(edge.grad.shape)}; mean of the result = "
            f"{number(np.asarray(edge.grad, dtype=np.float64).mean())}")
