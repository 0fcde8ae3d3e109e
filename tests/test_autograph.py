"""AutoGraph: eg.function rewrites ``if``/``while``/``for`` on tensors into eg.cond /
eg.while_loop, leaves Python-valued statements as Python, and ``eg.autograph.to_code`` shows
what it wrote. Each converted function is checked three ways: the traced graph holds the
control-flow node (or does not), the values equal the same Python code run eagerly, and so
do the gradients (a tape around the call)."""
import ast

import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import GradientError


def op_types(fn, *args):
    """The op types of ``fn``'s trace for ``args``, as traced (before the passes)."""
    return [op.type for op in fn.get_concrete_function(*args).graph.get_operations()]


def value_and_gradient(fn, x):
    """fn(x) and d sum(fn(x)) / dx, by a tape around the call."""
    x = eg.tensor(x)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
        total = eg.reduce_sum(y)
    return y.numpy(), tape.gradient(total, x).numpy()


def squash(x):
    """The TF2 deck's AutoGraph example: tanh until the sum is at most 1."""
    while eg.reduce_sum(x) > 1:
        x = eg.tanh(x)
    return x


def double_or_negate(x):
    if eg.reduce_sum(x) > 0:
        y = x * x
    else:
        y = -x
    return y


# ----------------------------------------------------------------------------- while
def test_the_slides_while_loop_becomes_one_while_node_with_eager_values_and_gradients():
    traced = eg.function(squash)
    assert "While" in op_types(traced, eg.tensor([5.0, 5.0]))
    for start in ([5.0, 5.0], [0.3, 0.2], [2.0, 1.5, 0.5]):
        got = value_and_gradient(traced, start)
        expected = value_and_gradient(squash, start)          # plain Python, eagerly
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-5)
    # one trace per shape: the loop counts when the graph runs, not while tracing
    assert traced.experimental_get_tracing_count() == 2


def test_a_while_loop_counting_from_a_python_int_is_a_graph_loop():
    @eg.function
    def count_to(n):
        i = 0
        while i < n:
            i += 1
        return i

    assert [int(count_to(eg.constant(k))) for k in (0, 3, 7)] == [0, 3, 7]
    assert count_to.experimental_get_tracing_count() == 1


def test_a_counter_that_is_not_returned_is_still_carried_by_the_loop():
    """`n += 1` reads n: a loop that counts without returning the count must carry it (a
    student who forgot `return n` got "cannot access local variable 'n'" from the generated
    loop body)."""
    @eg.function
    def halve_while_large(x):
        n = 0
        while eg.reduce_max(x) > 1:
            x = x / 2
            n += 1
        return x

    np.testing.assert_allclose(halve_while_large(eg.tensor([3.0, 1.0])).numpy(), [0.75, 0.25])
    assert "def loop_body(x, n):" in eg.autograph.to_code(halve_while_large.python_function)


def test_a_while_loop_on_python_values_stays_python_and_unrolls():
    @eg.function
    def doubled_thrice(x):
        k = 0
        while k < 3:
            x = x * 2
            k += 1
        return x

    types = op_types(doubled_thrice, eg.tensor([1.0]))
    assert "While" not in types and types.count("Mul") == 3
    assert doubled_thrice(eg.tensor([1.5])).numpy().tolist() == [12.0]


# ----------------------------------------------------------------------------- if
def test_an_if_on_a_tensor_becomes_one_if_node_and_the_gradient_follows_the_branch_run():
    traced = eg.function(double_or_negate)
    assert "If" in op_types(traced, eg.tensor([1.0, 2.0]))
    for x in ([1.0, 2.0], [-1.0, -2.0], [3.0, -1.0]):
        got, expected = value_and_gradient(traced, x), value_and_gradient(double_or_negate, x)
        np.testing.assert_allclose(got[0], expected[0])
        np.testing.assert_allclose(got[1], expected[1])
    assert traced.experimental_get_tracing_count() == 1      # one graph holds both branches


def test_an_if_on_a_python_value_stays_python_and_each_value_traces():
    @eg.function
    def maybe_doubled(x, training):
        if training:
            x = x * 2
        return x

    assert op_types(maybe_doubled, eg.tensor([1.0]), True) == ["Placeholder", "Const", "Mul"]
    assert op_types(maybe_doubled, eg.tensor([1.0]), False) == ["Placeholder"]
    assert maybe_doubled.experimental_get_tracing_count() == 2


def test_elif_and_or_not_and_a_conditional_expression_on_tensors():
    def sign_word(x):
        if x > 0 and not x > 10:
            code = eg.constant(1)
        elif x < 0 or x > 10:
            code = eg.constant(-1)
        else:
            code = eg.constant(0)
        return code * 10 + (eg.constant(1) if x > 5 else eg.constant(0))

    traced = eg.function(sign_word)
    for x in (3.0, 7.0, -2.0, 20.0, 0.0):
        assert int(traced(eg.constant(x))) == int(sign_word(eg.constant(x))), x
    # the if and the conditional expression; the elif's cond is inside the else branch
    assert op_types(traced, eg.constant(1.0)).count("If") == 2
    assert traced.experimental_get_tracing_count() == 1


def test_return_in_both_branches_of_a_tensor_if():
    @eg.function
    def absolute(x):
        if eg.reduce_sum(x) > 0:
            return x
        return -x

    assert absolute(eg.tensor([2.0])).numpy().tolist() == [2.0]
    assert absolute(eg.tensor([-2.0])).numpy().tolist() == [2.0]
    assert absolute.experimental_get_tracing_count() == 1


def test_a_name_set_in_one_branch_only_is_refused_with_its_name():
    @eg.function
    def half_set(x):
        if eg.reduce_sum(x) > 0:
            y = x
        return y

    with pytest.raises(ValueError, match="'y' is set in only one branch"):
        half_set(eg.tensor([1.0]))


def test_an_attribute_set_in_a_tensor_if_is_refused_with_what_to_do():
    class Counter:
        last = None

        @eg.function
        def __call__(self, x):
            if eg.reduce_sum(x) > 0:
                self.last = x
            return x

    with pytest.raises(TypeError, match=r"sets self\.last: eg\.cond traces both branches"):
        Counter()(eg.tensor([1.0]))


def test_branches_run_their_prints_only_when_taken(capsys):
    @eg.function
    def report(x):
        if x > 0:
            eg.print("positive")
        else:
            eg.print("not positive")
        return x

    for x in (1.0, -1.0, 2.0):
        report(eg.constant(x))
    assert capsys.readouterr().err.split("\n")[:3] == ["positive", "not positive", "positive"]


# ----------------------------------------------------------------------------- for
def test_for_over_eg_range_of_a_tensor_is_a_graph_loop_with_gradients():
    def weighted_sum(x, n):
        total = eg.zeros_like(x)
        for i in eg.range(n):
            total += x * eg.cast(i, eg.float32)
        return total

    traced = eg.function(weighted_sum)
    x = eg.tensor([1.0, 2.0])
    assert "While" in op_types(traced, x, eg.constant(3))
    for n in (0, 4, 6):
        with eg.GradientTape() as tape:
            tape.watch(x)
            y = eg.reduce_sum(traced(x, eg.constant(n)))
        triangle = n * (n - 1) / 2
        assert y.numpy() == pytest.approx(3 * triangle)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), [triangle, triangle])
    assert traced.experimental_get_tracing_count() == 1


def test_the_slides_static_python_loop_is_unrolled_and_the_tensor_loop_converted():
    @eg.function
    def f(x):
        for i in range(3):          # Static python loop, not converted
            x = x + 1
        for i in eg.range(3):       # Depends on a tensor, converted
            x = x * 2
        return x

    types = op_types(f, eg.tensor(1.0))
    assert types.count("Add") == 3 and types.count("While") == 1
    assert float(f(eg.tensor(1.0))) == 32.0


def test_for_over_a_tensors_rows_and_a_tensor_array():
    @eg.function
    def running_sums(m):
        sums = eg.TensorArray(eg.float32, size=0, dynamic_size=True)
        total = eg.zeros([m.shape[1]])
        k = 0
        for row in m:
            total = total + row
            sums = sums.write(k, total)
            k += 1
        return sums.stack()

    m = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert "While" in op_types(running_sums, eg.tensor(m))
    np.testing.assert_array_equal(running_sums(eg.tensor(m)).numpy(), np.cumsum(m, axis=0))


def test_a_gradient_through_a_loop_carrying_a_tensor_array_is_refused_not_none():
    @eg.function
    def stacked(x):
        values = eg.TensorArray(eg.float32, size=3)
        for i in eg.range(3):
            values = values.write(i, x * eg.cast(i, eg.float32))
        return eg.reduce_sum(values.stack())

    x = eg.Variable(2.0)
    assert float(stacked(x)) == 6.0
    with eg.GradientTape() as tape:
        y = stacked(x)
    with pytest.raises(GradientError, match="TensorArray carried by an eg.while_loop"):
        tape.gradient(y, x)


# ----------------------------------------------------------------------------- jumps
def test_break_in_a_python_loop_works_and_in_a_tensor_loop_is_refused_naming_its_line():
    @eg.function
    def first_three(x):
        for i in range(10):
            if i == 3:
                break
            x = x + 1
        return x

    assert float(first_three(eg.tensor(0.0))) == 3.0

    @eg.function
    def squash_with_break(x):
        while eg.reduce_sum(x) > 1:
            x = eg.tanh(x)
            if eg.reduce_sum(x) < 3:
                break
        return x

    # the while's line: two below the decorator's
    line = squash_with_break.python_function.__code__.co_firstlineno + 2
    with pytest.raises(TypeError, match=rf"does not convert a `while` loop with `break`.*"
                                        rf"\(line {line}\).*a flag variable"):
        squash_with_break(eg.tensor([5.0, 5.0]))


def test_return_inside_a_tensor_loop_is_refused_clearly():
    @eg.function
    def early(x):
        for i in eg.range(3):
            return x
        return -x

    with pytest.raises(TypeError, match="does not convert a `for` loop with `break`, "
                                        "`continue`, `return`"):
        early(eg.tensor(1.0))


def test_a_name_first_set_inside_a_tensor_loop_has_no_value_after_it():
    @eg.function
    def last_square(n):
        for i in eg.range(n):
            square = i * i
        return square

    with pytest.raises(NameError, match="'square' is set only inside a loop on a tensor"):
        last_square(eg.constant(3))


def test_a_python_condition_that_turns_into_a_tensor_is_explained():
    @eg.function
    def grows(x):
        y = 0.0
        while y < 3:
            y = y + eg.reduce_sum(x)
        return y

    with pytest.raises(TypeError, match="Make it a tensor from the start"):
        grows(eg.tensor([1.0]))


# ----------------------------------------------------------------------------- to_code
def test_to_code_prints_the_converted_source_of_the_slides_example():
    code = eg.autograph.to_code(eg.function(squash))
    assert code == eg.autograph.to_code(squash)
    assert code.splitlines()[0] == "def squash(x):"
    for piece in ("def loop_test(x):", "return eg.reduce_sum(x) > 1", "def loop_body(x):",
                  "x = eg.tanh(x)", "x, = ag__.while_stmt(loop_test, loop_body, (x,), ('x',))"):
        assert piece in code
    ast.parse(code)                              # valid Python a student can read and run


def test_to_code_of_code_without_control_flow_is_the_source_without_its_decorator():
    @eg.function
    def add(a, b):
        return a + b

    assert eg.autograph.to_code(add) == "def add(a, b):\n    return a + b"


def test_to_code_refuses_what_has_no_source_clearly():
    with pytest.raises(ValueError, match="cannot be read"):
        eg.autograph.to_code(lambda x: x)
    with pytest.raises(TypeError, match="needs a Python function"):
        eg.autograph.to_code(3)


# ----------------------------------------------------------------------------- switching off
def test_autograph_false_keeps_the_error_that_asks_for_cond():
    with pytest.raises(TypeError, match=r"as a Python `bool` is not allowed.*eg\.cond"):
        eg.function(double_or_negate, autograph=False)(eg.tensor([1.0]))


def test_do_not_convert_traces_the_code_as_written():
    @eg.autograph.experimental.do_not_convert
    def as_written(x):
        if eg.reduce_sum(x) > 0:
            x = -x
        return x

    with pytest.raises(TypeError, match="as a Python `bool`"):
        eg.function(as_written)(eg.tensor([1.0]))


def test_closures_and_nonlocal_state_are_shared_with_the_original():
    calls = 0
    scale = eg.constant(3.0)

    @eg.function
    def scaled(x):
        nonlocal calls
        calls += 1                               # Python: runs while tracing
        if eg.reduce_sum(x) > 0:
            x = x * scale
        return x

    assert scaled(eg.tensor([1.0])).numpy().tolist() == [3.0]
    assert scaled(eg.tensor([-1.0])).numpy().tolist() == [-1.0]
    assert calls == 1
