"""Graph inspector speed: building it for a 300-node graph, and one slider change.

Targets (issue 5): build (view + layout + figure) < 0.5 s for 300 nodes; a slider change on
f = (w·x + b)² updates the picture in < 50 ms on the Python side. Both for an eager result and
for a static graph, whose values come from one ``Session.run`` (and, for the slider, a
``Session.run`` again with the new value fed).

Then what a student opens (issue 26): lesson 3's training graph and a 20 000-node graph, eager
(no name scopes) and static (a scope per layer): the time to build, the size of the figure the
browser receives (its JSON), and one step of the walk.

    python -m bench.bench_inspector        (from the repository root)
"""
import time

import numpy as np

import edugraph as eg
from widgets.inspector import GraphInspector


def mlp_loss(num_layers, width=8, seed=0):
    """A tanh MLP with a squared-error loss: about 6 nodes per layer."""
    rng = np.random.default_rng(seed)
    h = eg.tensor(rng.normal(size=(4, width)))
    for _ in range(num_layers):
        w = eg.tensor(rng.normal(size=(width, width)) / width, requires_grad=True)
        b = eg.tensor(np.zeros(width), requires_grad=True)
        h = eg.tanh(h @ w + b)
    return ((h - 1.0) ** 2).mean()


def static_mlp(num_layers, width=8, seed=0):
    """The same MLP as a static graph, one name scope per layer, in an initialised Session."""
    rng = np.random.default_rng(seed)
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float32, (None, width), name="x")
        h = x
        for i in range(num_layers):
            with eg.name_scope(f"layer{i}"):
                w = eg.Variable((rng.normal(size=(width, width)) / width).astype("float32"),
                                name="w")
                b = eg.Variable(np.zeros(width, "float32"), name="b")
                h = eg.tanh(eg.matmul(h, w) + b)
        loss = eg.reduce_mean((h - 1.0) ** 2)
        init = eg.global_variables_initializer()
    sess = eg.Session(graph=graph)
    sess.run(init)
    return loss, sess, {x: rng.normal(size=(4, width)).astype("float32")}


def static_f():
    graph = eg.Graph()
    with graph.as_default():
        x, w, b = (eg.placeholder(eg.float32, (), name=n) for n in "xwb")
        f = (w * x + b) ** 2
    return f, eg.Session(graph=graph), {x: 2.0, w: -1.0, b: 3.0}


def lesson3_graph():
    """Lesson 3's dense layer, its loss and minimize's gradient and update nodes, as the
    lesson shows them (the gradients scope collapsed)."""
    eg.random.set_seed(0)
    (images, labels), _ = eg.datasets.load_digits()
    x_train = images[:5].reshape(5, -1)
    y_train = np.eye(10, dtype=np.float32)[labels[:5]]
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float32, shape=(None, x_train.shape[1]), name="x")
        y = eg.placeholder(eg.float32, shape=(None, 10), name="y")
        y_pred = eg.layers.dense(inputs=x, units=10, activation=eg.nn.relu)
        loss = eg.losses.mean_squared_error(y_pred, y)
        updates = eg.train.GradientDescentOptimizer(1e-2).minimize(loss)
        sess = eg.Session()
        sess.run(eg.global_variables_initializer())
    return dict(target=[loss, updates], session=sess, feed_dict={x: x_train, y: y_train},
                output=loss, collapsed=["gradients"])


def opened(name, make):
    """Build an inspector, then one step of its walk: seconds, and the figure's size."""
    start = time.perf_counter()
    inspector = make()
    build = time.perf_counter() - start
    size = len(inspector.figure.to_json())
    step = best_of(lambda: setattr(inspector.step, "value", (inspector.step.value + 1) % 3),
                   3)[0]
    print(f"{name:<29}{len(inspector.view.nodes):6d} nodes: build {build:6.2f} s, figure "
          f"{size / 1e6:6.2f} MB, step {step * 1e3:7.1f} ms")


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), float(np.median(times))


def main():
    GraphInspector(mlp_loss(2))                      # imports and plotly's first figure
    loss = mlp_loss(60)
    inspector = GraphInspector(loss)
    nodes = len(inspector.view.nodes)
    best, median = best_of(lambda: GraphInspector(loss), 5)
    print(f"build inspector, {nodes} nodes:  best {best * 1e3:7.1f} ms  "
          f"median {median * 1e3:7.1f} ms   (target < 500 ms)")

    def f(x, w, b):
        return (w * x + b) ** 2
    small = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    values = iter(np.linspace(-3, 1, 1000))
    best, median = best_of(lambda: setattr(small.sliders[0], "value", next(values)), 50)
    print(f"slider change, (w·x + b)²:     best {best * 1e3:7.2f} ms  "
          f"median {median * 1e3:7.2f} ms   (target < 50 ms)")

    loss, sess, feed = static_mlp(60)
    inspector = GraphInspector(loss, session=sess, feed_dict=feed)
    nodes = len(inspector.view.nodes)
    best, median = best_of(lambda: GraphInspector(loss, session=sess, feed_dict=feed), 5)
    print(f"static graph, {nodes} nodes:    best {best * 1e3:7.1f} ms  "
          f"median {median * 1e3:7.1f} ms   (target < 500 ms)")

    f, sess, feed = static_f()
    small = GraphInspector(f, session=sess, feed_dict=feed)
    best, median = best_of(lambda: setattr(small.sliders[1], "value", next(values)), 50)
    print(f"static slider, (w·x + b)²:     best {best * 1e3:7.2f} ms  "
          f"median {median * 1e3:7.2f} ms   (target < 50 ms)")

    lesson3 = lesson3_graph()
    opened("lesson 3's training graph", lambda: GraphInspector(**lesson3))
    loss = mlp_loss(4000)
    opened("eager MLP, no name scopes", lambda: GraphInspector(loss))
    loss, sess, feed = static_mlp(4000)
    opened("static MLP, scope per layer", lambda: GraphInspector(loss, session=sess,
                                                                 feed_dict=feed))


if __name__ == "__main__":
    main()
