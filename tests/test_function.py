"""@eg.function: tracing rules, side effects, variables, tapes, training steps, layers, passes."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.graph.function import ConcreteFunction

rng = np.random.default_rng(0)


def arr(*shape, dtype=np.float32):
    return rng.normal(size=shape).astype(dtype)


# ----------------------------------------------------------------------------- tracing
def test_traces_once_per_signature_and_runs_the_graph_afterwards():
    traces = []

    @eg.function
    def f(x, y):
        traces.append(x.shape)              # a Python side effect: runs while tracing only
        return eg.reduce_sum(x * y + 1)

    x, y = arr(3, 4), arr(3, 4)
    expected = np.sum(x * y + 1)
    for _ in range(3):
        np.testing.assert_allclose(f(x, y).numpy(), expected, rtol=1e-6)
    assert f.experimental_get_tracing_count() == 1 and traces == [(3, 4)]
    f(eg.tensor(x), eg.tensor(y))           # a Tensor of the same shape: the same trace
    assert f.experimental_get_tracing_count() == 1
    f(arr(2, 4), arr(2, 4))                 # new shape: traced again
    f(x.astype(np.float64), y.astype(np.float64))     # new dtype: traced again
    assert f.experimental_get_tracing_count() == 3
    f(arr(2, 4), arr(2, 4))                 # both known now
    f(x, y)
    assert f.experimental_get_tracing_count() == 3 and len(traces) == 3


def test_python_values_are_part_of_the_signature():
    @eg.function
    def power(x, n, mode="sum"):
        y = x
        for _ in range(n):                  # a Python loop on a Python int: unrolled
            y = y * x
        return eg.reduce_sum(y) if mode == "sum" else eg.reduce_max(y)

    x = np.array([1.0, 2.0, 3.0], np.float32)
    assert power(x, 1).numpy() == 14.0
    assert power(x, 2).numpy() == 36.0
    assert power(x, 1).numpy() == 14.0
    assert power.experimental_get_tracing_count() == 2
    assert power(x, 2, mode="max").numpy() == 27.0
    assert power.experimental_get_tracing_count() == 3

    @eg.function
    def scale(x, k):
        return x * k

    scale(x, 2)
    scale(x, 2.0)                           # 2.0 is not 2: another trace, as in TF2
    scale(x, 2)
    assert scale.experimental_get_tracing_count() == 2


def test_print_runs_only_while_tracing(capsys):
    @eg.function
    def f(x):
        print("tracing f")
        return x + 1

    f(arr(2))
    f(arr(2))
    f(arr(2))
    assert capsys.readouterr().out == "tracing f\n"


def test_nested_arguments_and_results():
    @eg.function
    def f(inputs, scale):
        a, b = inputs["pair"]
        return {"sum": a + b, "both": [a * scale, (b, 7)]}

    a, b = arr(2, 3), arr(2, 3)
    out = f({"pair": (a, b)}, 2.0)
    np.testing.assert_allclose(out["sum"].numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(out["both"][0].numpy(), a * 2, rtol=1e-6)
    np.testing.assert_allclose(out["both"][1][0].numpy(), b)
    assert out["both"][1][1] == 7           # Python values come back as they were returned
    cf = f.get_concrete_function({"pair": (a, b)}, 2.0)
    assert [t.name for t in cf.inputs] == ["inputs_pair_0:0", "inputs_pair_1:0"]
    assert len(cf.outputs) == 3 and isinstance(cf.structured_outputs["sum"], eg.SymbolicTensor)


def test_input_signature_traces_once_for_any_batch_size():
    @eg.function(input_signature=[eg.TensorSpec((None, 3), eg.float32)])
    def f(x):
        return eg.reduce_sum(x, axis=1)

    for n in (1, 4, 9):
        x = arr(n, 3)
        np.testing.assert_allclose(f(x).numpy(), x.sum(axis=1), rtol=1e-5)
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(ValueError, match="input_signature"):
        f(arr(2, 4))


def test_concrete_function_interface():
    @eg.function
    def f(x, y):
        unused = eg.exp(x)                  # pruned away  # noqa: F841
        return eg.reduce_sum(x * y + x * y + 1.0)

    x, y = arr(3, 4), arr(3, 4)
    cf = f.get_concrete_function(x, y)
    assert isinstance(cf, ConcreteFunction)
    assert cf is f.get_concrete_function(x, y)
    assert [t.op.type for t in cf.inputs] == ["Placeholder", "Placeholder"]
    assert cf.outputs[0].graph is cf.graph and cf.optimized_outputs[0].graph is \
        cf.optimized_graph
    names = [name for name, _, _ in cf.pass_stages]
    assert names == ["traced", "prune", "fold_constants", "eliminate_common_subexpressions",
                     "update_in_place", "fuse_elementwise"]
    counts = dict(cf.op_counts())
    assert counts["prune"] == counts["traced"] - 1                  # exp removed
    assert counts["eliminate_common_subexpressions"] == counts["prune"] - 1   # x*y once
    assert counts["fuse_elementwise"] < counts["eliminate_common_subexpressions"]
    np.testing.assert_allclose(cf(x, y).numpy(), np.sum(2 * x * y + 1), rtol=1e-5)
    assert "traced" in repr(cf) and "optimized" in repr(cf)
    lines = []
    cf.summary(print_fn=lines.append)
    assert "fuse_elementwise" in lines[0] and "2 input(s)" in lines[0]
    with pytest.raises(ValueError, match="shape"):
        cf(arr(2, 4), arr(2, 4))


def test_passes_can_be_switched_off_and_give_the_same_values():
    def body(x, y):
        c = eg.constant(np.ones((3, 4), np.float32)) * 2.0       # folded to a constant
        return eg.reduce_sum(eg.tanh(x * y + c) * (x * y))

    x, y = arr(3, 4), arr(3, 4)
    full = eg.function(body).get_concrete_function(x, y)
    none = eg.function(body, passes=[]).get_concrete_function(x, y)
    some = eg.function(body, passes=["fold_constants", "prune"]).get_concrete_function(x, y)
    np.testing.assert_allclose(full(x, y).numpy(), none(x, y).numpy(), rtol=1e-6)
    np.testing.assert_allclose(some(x, y).numpy(), none(x, y).numpy(), rtol=1e-6)
    assert [n for n, _, _ in none.pass_stages] == ["traced"]
    assert none.optimized_graph is none.graph
    assert [n for n, _, _ in some.pass_stages] == ["traced", "fold_constants", "prune"]

    def types(graph):
        return [op.type for op in graph.get_operations()]
    traced = types(none.graph)
    folded = types(some.optimized_graph)    # ones * 2 became one number; dead constants gone
    assert folded.count("Mul") == traced.count("Mul") - 1
    assert folded.count("Const") == traced.count("Const") - 1 and len(folded) == len(traced) - 2
    assert len(full.optimized_graph.get_operations()) < len(some.optimized_graph.get_operations())
    assert any(op.type == "FusedElementwise" or op.eg_op.name == "fused"
               for op in full.optimized_graph.get_operations())
    with pytest.raises(ValueError, match="Unknown graph pass 'cse_please'"):
        eg.function(body, passes=["cse_please"])


def test_python_if_on_a_tensor_points_to_cond_without_autograph():
    def f(x):
        if eg.reduce_sum(x) > 0:
            return x
        return -x

    with pytest.raises(TypeError, match=r"eg\.cond.*AutoGraph.*autograph=False"):
        eg.function(f, autograph=False)(arr(3))
    x = arr(3)
    np.testing.assert_allclose(eg.function(f)(x).numpy(), x if x.sum() > 0 else -x)


def test_traced_function_calls_inside_another_are_inlined():
    @eg.function
    def inner(x):
        return x * 2

    @eg.function
    def outer(x):
        return inner(x) + 1

    x = arr(3)
    np.testing.assert_allclose(outer(x).numpy(), x * 2 + 1, rtol=1e-6)
    assert inner.experimental_get_tracing_count() == 0


def test_decorated_method_traces_per_object():
    class Scaler:
        def __init__(self, k):
            self.k = k

        @eg.function
        def __call__(self, x):
            return x * self.k

    a, b = Scaler(2.0), Scaler(3.0)
    x = arr(2)
    np.testing.assert_allclose(a(x).numpy(), x * 2, rtol=1e-6)
    np.testing.assert_allclose(b(x).numpy(), x * 3, rtol=1e-6)


# ----------------------------------------------------------------------------- variables
def test_variables_are_read_when_the_function_runs():
    v = eg.Variable(np.array([1.0, 2.0], np.float32))

    @eg.function
    def f(x):
        return x * v

    x = np.ones(2, np.float32)
    np.testing.assert_allclose(f(x).numpy(), [1, 2])
    v.assign([5.0, 6.0])                    # changed eagerly: the graph reads the new value
    np.testing.assert_allclose(f(x).numpy(), [5, 6])
    assert f.experimental_get_tracing_count() == 1
    assert [t for t, _ in f.get_concrete_function(x).captures] == [v]


def test_assign_inside_updates_the_eager_variable_on_every_call():
    counter = eg.Variable(0.0)
    w = eg.Variable(np.array([1.0, 2.0], np.float32))

    @eg.function
    def step(x):
        counter.assign_add(1.0)             # nobody fetches it: it runs anyway (TF2)
        w.assign(w * x)
        return w + 0.5                      # reads the new value

    out = step(np.array([2.0, 3.0], np.float32))
    np.testing.assert_allclose(out.numpy(), [2.5, 6.5])
    step(np.array([2.0, 3.0], np.float32))
    assert counter.numpy() == 2.0
    np.testing.assert_allclose(w.numpy(), [4.0, 18.0])


def test_a_read_before_an_assign_keeps_the_old_value():
    v = eg.Variable(np.array([1.0, 2.0]))

    @eg.function
    def swap_in(new):
        old = v.read_value()
        alias = eg.reshape(v, (2, 1))       # a view of the variable's storage
        v.assign(new)
        return old, alias, v.read_value()

    old, alias, now = swap_in(np.array([7.0, 8.0]))
    np.testing.assert_allclose(old.numpy(), [1, 2])
    np.testing.assert_allclose(alias.numpy(), [[1], [2]])
    np.testing.assert_allclose(now.numpy(), [7, 8])
    np.testing.assert_allclose(v.numpy(), [7, 8])


def test_variables_are_created_on_the_first_trace_only():
    layer = eg.layers.Dense(3)

    @eg.function
    def f(x):
        return layer(x)                     # builds the layer: its variables live outside

    x = arr(2, 4)
    y = f(x)
    assert isinstance(layer.kernel, eg.Variable) and layer.kernel.graph is None
    np.testing.assert_allclose(y.numpy(), x @ layer.kernel.numpy() + layer.bias.numpy(),
                               rtol=1e-5)
    f(arr(5, 4))                            # a retrace that creates nothing: fine

    @eg.function
    def make(x, n):
        return x * eg.Variable(np.ones(3, np.float32) * n)

    with pytest.raises(ValueError, match="creates a variable each time its code runs"):
        make(arr(3), 1)                     # TF: a ValueError on the first call already

    scale = []

    @eg.function
    def make_on_second_trace(x, n):
        if n == 2 and not scale:
            scale.append(eg.Variable(np.ones(3, np.float32)))
        return x * n

    make_on_second_trace(arr(3), 1)
    with pytest.raises(ValueError, match="first time it is traced"):
        make_on_second_trace(arr(3), 2)


def test_gradient_tape_inside_builds_gradient_nodes():
    w = eg.Variable(arr(4, 3))

    def loss_and_grads(x):
        with eg.GradientTape() as tape:
            tape.watch(x)
            loss = eg.reduce_sum(eg.tanh(eg.matmul(x, w)) ** 2)
        gx, gw = tape.gradient(loss, [x, w])
        return loss, gx, gw

    x = arr(2, 4)
    eager = loss_and_grads(eg.tensor(x))
    traced = eg.function(loss_and_grads)(x)
    for a, b in zip(eager, traced):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    cf = eg.function(loss_and_grads).get_concrete_function(x)
    assert any(op.name.startswith("gradients/") for op in cf.graph.get_operations())


def test_tape_gradient_of_an_unused_variable_is_none_or_zero():
    w, unused = eg.Variable(2.0), eg.Variable(3.0)

    @eg.function
    def f(x):
        with eg.GradientTape(persistent=True) as tape:
            y = x * w
        return (tape.gradient(y, [w, unused]),
                tape.gradient(y, unused, unconnected_gradients="zero"))

    (gw, gu), zero = f(np.float32(5.0))
    assert gw.numpy() == 5.0 and gu is None and zero.numpy() == 0.0


def test_a_tape_inside_holds_only_its_block_as_eagerly():
    """As TF's tape, in a tf.function too: what runs after the block, or before it, is not
    on the tape, and the traced function gives the eager answers (None for a loss computed
    after the block; it got a gradient)."""
    w = eg.Variable(2.0)

    def grads(x):
        before = w * x                              # not recorded: no path to w through it
        with eg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = before * x + w * x
        after = y * 3.0
        return tape.gradient(after, [x, w]), tape.gradient(y, [x, w])

    x = np.float32(5.0)
    eager = grads(eg.tensor(x))
    traced = eg.function(grads)(x)
    for got in (eager, traced):
        assert got[0] == [None, None]
        # dy/dx = before + w, dy/dw = x: `before` is a constant to the tape (else 22, 30)
        assert [g.item() for g in got[1]] == [12.0, 5.0]


def test_fill_takes_a_value_computed_in_the_function():
    """tf.fill(dims, value) takes a tensor value (its gradient: the sum of the output's);
    traced, fill crashed in constant folding."""
    def f(t):
        with eg.GradientTape() as tape:
            tape.watch(t)
            y = eg.reduce_sum(eg.fill((2, 3), t * t))
        return y, tape.gradient(y, t)

    for run in (f, eg.function(f)):
        y, dt = run(eg.constant(2.0))
        assert (y.item(), dt.item()) == (24.0, 24.0)        # 6 t², and 12 t
    assert eg.function(lambda t: eg.fill([2], t))(eg.constant(3, eg.int32)).dtype == eg.int32
    assert eg.fill([2], 9).dtype == eg.int32 and eg.fill([2], 9.0).dtype == eg.float32
    with pytest.raises(ValueError, match="a single number"):
        eg.fill([2], eg.ones(2))


# ----------------------------------------------------------------------------- training
def _model(seed):
    eg.random.set_seed(seed)
    return eg.Sequential([eg.layers.Dense(16, activation="relu"),
                          eg.layers.Dense(8, activation="tanh"), eg.layers.Dense(1)])


@pytest.mark.parametrize("make_optimizer", [
    lambda: eg.train.GradientDescentOptimizer(0.1),
    lambda: eg.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    lambda: eg.train.AdamOptimizer(0.01)])
def test_train_step_gives_the_eager_losses(make_optimizer):
    x, y = arr(32, 5), arr(32, 1)

    def train(step_fn_of):
        model, opt = _model(3), make_optimizer()

        def train_step(xb, yb):
            with eg.GradientTape() as tape:
                loss = eg.reduce_mean(eg.square(model(xb, training=True) - yb))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        step = step_fn_of(train_step)
        losses = [float(step(eg.tensor(x), eg.tensor(y))) for _ in range(6)]
        return losses, model.get_weights(), step

    eager, eager_weights, _ = train(lambda f: f)
    traced, traced_weights, step = train(eg.function)
    np.testing.assert_allclose(traced, eager, rtol=1e-5)
    for a, b in zip(eager_weights, traced_weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    # the first trace made the optimizer's variables, so it was traced once more at once, and
    # TF counts both (2 for a Keras Adam step in TF 2.21 too)
    assert eager[-1] < eager[0] and step.experimental_get_tracing_count() == 2


_LAYERS = {      # name: (make the layer, make its input, call arguments)
    "dense": (lambda: eg.layers.Dense(4, activation="relu"), lambda: arr(3, 5), {}),
    "conv2d": (lambda: eg.layers.Conv2D(4, 3, padding="same"), lambda: arr(2, 6, 6, 3), {}),
    "maxpool": (lambda: eg.layers.MaxPooling2D(2), lambda: arr(2, 6, 6, 3), {}),
    "avgpool": (lambda: eg.layers.AveragePooling2D(3, 2, "same"), lambda: arr(2, 6, 6, 3), {}),
    "gap": (lambda: eg.layers.GlobalAveragePooling2D(), lambda: arr(2, 6, 6, 3), {}),
    "flatten": (lambda: eg.layers.Flatten(), lambda: arr(2, 6, 6, 3), {}),
    "reshape": (lambda: eg.layers.Reshape((9, 12)), lambda: arr(2, 6, 6, 3), {}),
    "activation": (lambda: eg.layers.Activation("sigmoid"), lambda: arr(3, 5), {}),
    "layernorm": (lambda: eg.layers.LayerNormalization(), lambda: arr(3, 5), {}),
    "batchnorm_infer": (lambda: eg.layers.BatchNormalization(), lambda: arr(8, 5),
                        {"training": False}),
    "batchnorm_train": (lambda: eg.layers.BatchNormalization(), lambda: arr(8, 5),
                        {"training": True}),
    "dropout_infer": (lambda: eg.layers.Dropout(0.5), lambda: arr(3, 5), {"training": False}),
    "dropout_train": (lambda: eg.layers.Dropout(0.5), lambda: arr(3, 5), {"training": True}),
    "embedding": (lambda: eg.layers.Embedding(10, 4),
                  lambda: np.array([[1, 2, 9], [0, 0, 3]], np.int64), {}),
}


@pytest.mark.parametrize("name", list(_LAYERS))
def test_every_layer_works_inside_a_traced_function(name):
    make, make_x, kwargs = _LAYERS[name]
    x = make_x()
    eg.random.set_seed(7)
    eager_layer = make()
    eg.random.set_seed(7)
    expected = eager_layer(eg.tensor(x), **kwargs).numpy()
    eg.random.set_seed(7)
    traced_layer = make()

    @eg.function
    def f(inputs):
        return traced_layer(inputs, **kwargs)

    eg.random.set_seed(7)
    np.testing.assert_allclose(f(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    for a, b in zip(eager_layer.get_weights(), traced_layer.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)   # BN moving stats updated alike
    if name == "batchnorm_train":
        f(x)
        assert not np.allclose(traced_layer.moving_mean.numpy(), eager_layer.moving_mean.numpy())
    if name == "dropout_train":             # a new mask on each call: the op runs each time
        assert not np.array_equal(f(x).numpy(), f(x).numpy())


def test_runs_where_its_arguments_live(device):
    """On an accelerator (and the stand-in sim:0) the traced graph, its cond and while loop,
    the gradients and the variable update all stay on that device."""
    with eg.device(device):
        x = eg.tensor(np.ones((2, 3), np.float32))
        w = eg.Variable(np.ones(3, np.float32))

    @eg.function
    def step(x):
        with eg.GradientTape() as tape:
            y = eg.reduce_sum(eg.cond(eg.reduce_sum(x) > 0, lambda: x * w, lambda: x - w))
            _, z = eg.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, z * w), [0, y * w])
            loss = eg.reduce_sum(z)
        g = tape.gradient(loss, w)
        w.assign_sub(g * 0.1)
        return loss, g

    loss, g = step(x)                       # loss = sum(x w) * sum(w^4) = 6 * 3 at w = 1
    assert loss.device.name == device and g.device.name == device
    assert float(loss.numpy()) == 18.0
    np.testing.assert_allclose(g.numpy(), [30, 30, 30])     # 2 sum(w^4) + 4 y w^3
    np.testing.assert_allclose(w.numpy(), [-2, -2, -2])


def test_fold_constants_leaves_no_dead_constants_behind():
    def body(x):
        c = eg.constant(np.full((3, 4), 3.0, np.float32)) - 1.0     # folded to one constant
        return eg.reduce_sum(x * c * 1.0)                             # * 1.0 dropped

    x = arr(3, 4)
    cf = eg.function(body, passes=["fold_constants"]).get_concrete_function(x)
    graph, outputs = cf.optimized_graph, cf.optimized_outputs
    used = {t.op for op in graph.get_operations() for t in op.inputs} | {t.op for t in outputs}
    unused = [op.name for op in graph.get_operations()
              if op not in used and op.type != "Placeholder"]
    assert unused == []
    assert [op.type for op in graph.get_operations()].count("Const") == 1
    np.testing.assert_allclose(cf(x).numpy(), np.sum(x * 2.0), rtol=1e-6)


def test_a_long_traced_chain_fuses_without_recursion():
    """Elementwise fusion walks a chain of thousands of ops with an explicit stack."""
    @eg.function
    def chain(x):
        with eg.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(3000):
                y = y * 1.0001 + 0.5
        return y, tape.gradient(y, x)

    x = eg.tensor(np.float32(0.25))
    y, grad = chain(x)
    expected, slope = np.float64(0.25), 1.0
    for _ in range(3000):
        expected, slope = expected * 1.0001 + 0.5, slope * 1.0001
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-3)
    np.testing.assert_allclose(grad.numpy(), slope, rtol=1e-3)
    ops = chain.get_concrete_function(x).optimized_graph.get_operations()
    assert sum(op.type == "FusedElementwise" for op in ops) >= 1 and len(ops) < 50


# ----------------------------------------------------------------------------- a tape outside
def test_a_tape_around_a_traced_call_differentiates_through_it():
    """TF2: tape.gradient(f(x), [w, x]) works when f is traced; same numbers as untraced."""
    rng = np.random.default_rng(3)
    w = eg.Variable(rng.normal(size=(3, 2)).astype(np.float32), name="w")
    x = eg.tensor(rng.normal(size=(4, 3)).astype(np.float32))

    def loss_fn(x):
        h = eg.tanh(eg.matmul(x, w))
        return eg.reduce_mean(h * h), eg.reduce_sum(h)

    traced = eg.function(loss_fn)
    results = []
    for fn in (loss_fn, traced):
        with eg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            first, second = fn(x)
            total = first * 3.0 + second
        results.append([tape.gradient(first, [w, x]), tape.gradient(total, [w, x])])
    for eager_grads, traced_grads in zip(*results):
        for e, t in zip(eager_grads, traced_grads):
            np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)
    assert traced.experimental_get_tracing_count() == 1


def test_backward_through_a_traced_call_and_no_recording_when_not_asked():
    @eg.function
    def f(x):
        return eg.reduce_sum(x ** 3), eg.argmax(x, 0)

    x = eg.tensor(np.array([1.0, -2.0, 0.5]), requires_grad=True)
    value, index = f(x)
    value.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy() ** 2)
    assert not index.requires_grad                   # integer outputs are not differentiable
    plain = f(eg.tensor(np.array([1.0, -2.0, 0.5])))[0]
    assert not plain.requires_grad and plain._op is None     # nothing recorded, no cost


def test_gradients_of_a_traced_train_step_use_the_values_it_read():
    """The step assigns w in place; the tape's gradient is at the w the loss was computed
    with, as the eager step gives."""
    def make():
        return eg.Variable(np.array([0.5, -1.0, 2.0]), name="w")

    def step(w, x):
        loss = eg.reduce_sum(eg.square(w * x - 1.0))
        w.assign_sub(0.1 * w)
        return loss

    x = eg.tensor(np.array([1.0, 2.0, 3.0]))
    grads = []
    for fn in (step, eg.function(step)):
        w = make()
        with eg.GradientTape() as tape:
            fn(w, x)
            loss = fn(w, x)                          # the second call reads the updated w
        grads.append(tape.gradient(loss, w).numpy())
        np.testing.assert_allclose(w.numpy(), make().numpy() * 0.81)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_a_keras_model_called_in_a_traced_function_trains_from_an_outer_tape():
    eg.random.set_seed(0)
    model = eg.Sequential([eg.layers.Dense(4, activation="relu", input_shape=(3,)),
                           eg.layers.Dense(1)])
    x = eg.tensor(np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32))
    forward = eg.function(lambda x: model(x))
    grads = []
    for fn in (model, forward):
        with eg.GradientTape() as tape:
            loss = eg.reduce_mean(eg.square(fn(x)))
        grads.append(tape.gradient(loss, model.trainable_variables))
    for e, t in zip(*grads):
        np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-5, atol=1e-7)


def test_second_derivatives_through_a_traced_call_are_refused_clearly():
    f = eg.function(lambda x: eg.reduce_sum(x ** 3))
    x = eg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    with pytest.raises(eg.errors.GradientError, match="second derivative.*inside the function"):
        eg.grad([f(x)], [x], create_graph=True)


def test_a_tape_around_a_traced_cond_matches_eager():
    @eg.function
    def clip_by_norm(g, max_norm):
        norm = eg.sqrt(eg.reduce_sum(g * g))
        return eg.cond(norm > max_norm, lambda: g * (max_norm / norm), lambda: g)

    a = eg.tensor([1.0, 2.0])
    for start in ([0.3, 0.4], [3.0, 4.0]):           # one of each branch
        v = eg.tensor(start)
        with eg.GradientTape() as tape:
            tape.watch(v)
            out = eg.reduce_sum(a * clip_by_norm(v, 1.0))
        g = tape.gradient(out, v).numpy()
        x = np.array(start)
        norm = np.linalg.norm(x)
        expected = [1.0, 2.0] if norm <= 1 else \
            np.array([1.0, 2.0]) / norm - x * (x @ [1.0, 2.0]) / norm ** 3
        np.testing.assert_allclose(g, expected, rtol=1e-5)


def test_reading_a_value_while_tracing_says_how_to_see_it():
    @eg.function
    def peek(a):
        return a.numpy()
    with pytest.raises(NotImplementedError, match=r"until the traced function runs .*Return it "
                                                  r".*eg\.print\(t\)"):
        peek(eg.tensor(1.0))
    with eg.Graph().as_default():
        with pytest.raises(NotImplementedError, match=r"until a Session runs it\. Use sess\.run"):
            eg.constant(1.0).numpy()


def test_an_input_signature_converts_numpy_data_and_python_numbers_as_tf():
    """TF converts a list or a float64 array to the signature's float32 (one trace for all);
    a tensor of another dtype, or floats for an integer spec, are still refused, naming what
    was passed."""
    @eg.function(input_signature=[eg.TensorSpec([None], eg.float32)])
    def double(x):
        return x * 2

    for value in ([1.0, 2.0], np.array([1.0, 2.0]), [1, 2], np.array([1.0, 2.0], np.float32)):
        got = double(value)
        assert got.dtype == eg.float32 and got.numpy().tolist() == [2.0, 4.0]
    assert double.experimental_get_tracing_count() == 1
    with pytest.raises(eg.errors.TracingTypeError, match=r"\(\(2,\) float64\) that do not "
                                                          "match its input_signature"):
        double(eg.tensor(np.array([1.0, 2.0])))

    @eg.function(input_signature=[eg.TensorSpec([None], eg.int32)])
    def twice(n):
        return n * 2

    assert twice([1, 2]).dtype == eg.int32
    with pytest.raises(eg.errors.TracingTypeError, match=r"\(\[1\.5\]\) that do not match"):
        twice([1.5])


def test_a_first_trace_that_made_variables_counts_twice_as_in_tf():
    """TF traces such a function once more at once and counts both traces (TF 2.21: 3 after
    two calls with different Python numbers)."""
    class Scaled(eg.Module):
        def __init__(self):
            super().__init__()
            self.v = None

        @eg.function
        def __call__(self, x):
            if self.v is None:
                self.v = eg.Variable(1.0)
            return self.v * x

    scaled = Scaled()
    assert scaled(1.0).numpy() == 1.0 and scaled(2.0).numpy() == 2.0
    assert scaled.__call__.experimental_get_tracing_count() == 3
