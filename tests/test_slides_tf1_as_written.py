"""The lecture slides' TF1 programs run as written, with TF's migration idiom in place of
``import tensorflow as tf``::

    import edugraph.compat.v1 as tf
    tf.disable_v2_behavior()            # TF 1.x's default: graphs and Sessions

and every other line of the slide untouched (a fragment gets the idiom in front, for the
import its program had earlier). The TF 1.x eager-preview slides call
``tf.enable_eager_execution()`` themselves, so they get the import alone. The slides' code
is kept as text, exactly as on the slides (the PDF conversion's line numbers and its
``as default()`` for ``as_default()`` aside), and run with ``exec``.
"""
import os
import types

import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import FailedPreconditionError
from edugraph.graph.session import building_state_kept
from tests.tf_frameworks import run_cell

MIGRATION = "import edugraph.compat.v1 as tf\ntf.disable_v2_behavior()"


@pytest.fixture(autouse=True)
def fresh_tf1_program(tmp_path, monkeypatch):
    """Each program starts as a new Python process would: a fresh default graph, eager
    execution on, in a folder of its own (for ./graphs and summaries/)."""
    monkeypatch.chdir(tmp_path)
    np.random.seed(0)
    with building_state_kept():
        eg.reset_default_graph()
        eg.enable_eager_execution()
        yield


def run_tf1(slide, **names):
    """Run a TF1 slide with the migration idiom; returns the names it defined."""
    code = slide.replace("import tensorflow as tf", MIGRATION) \
        if "import tensorflow as tf" in slide else MIGRATION + "\n" + slide
    return run(code, names)


def run_tf1_eager(slide, **names):
    """Run a TF 1.x eager-preview slide: it enables eager execution itself."""
    return run(slide.replace("import tensorflow as tf", "import edugraph.compat.v1 as tf"),
               names)


def run(code, names):
    """Run ``code`` as a notebook cell (numpy as ``np``, and ``names``); its names back."""
    return run_cell(code, **{"np": np, **names})


def digits_one_hot():
    """The slides' x_train, y_train: here the 8×8 digits, flattened, with one-hot labels."""
    (images, labels), _ = eg.datasets.load_digits()
    return images.reshape(len(images), -1), np.eye(10, dtype=np.float32)[labels]


def plot_recorder():
    """A stand-in for the slides' ``pl`` (matplotlib's pylab): keeps what is plotted."""
    plotted = []
    return types.SimpleNamespace(plot=plotted.append, plotted=plotted)


def read_events(logdir):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    accumulator = EventAccumulator(str(logdir))
    accumulator.Reload()
    return accumulator


# ----------------------------------------------------------------------------- graphs
SIMPLE_GRAPH = """\
# simple computational graph with tensorflow
N, D = 3, 4
x = tf.placeholder(tf.float32, shape=(N, D))
y = tf.placeholder(tf.float32, shape=(N, D))
z = tf.placeholder(tf.float32, shape=(N, D))

a = x * y
b = a + z
c = tf.reduce_sum(b)

grad_x, grad_y, grad_z = tf.gradients(c, [x, y, z])

with tf.Session() as sess:
    values = {
        x: np.random.randn(N, D),
        y: np.random.randn(N, D),
        z: np.random.randn(N, D)
    }
    out = sess.run([c, grad_x, grad_y, grad_z],
                  feed_dict=values)
    c_val, grad_x_val, grad_y_val, grad_z_val = out
"""

BASIC_GRAPH = """\
# Basic computational graph
import numpy as np
np.random.seed(0)
import tensorflow as tf

N, D = 3, 4


x = tf.placeholder(tf.float32)
y = tf.placeholder(tf.float32)
z = tf.placeholder(tf.float32)

a = x * y
b = a + z
c = tf.reduce_sum(b)

grad_x, grad_y, grad_z = tf.gradients(c, [x, y, z])

with tf.Session() as sess:
    values = {
        x: np.random.randn(N, D),
        y: np.random.randn(N, D),
        z: np.random.randn(N, D),
    }
    out = sess.run([c, grad_x, grad_y, grad_z],
                    feed_dict=values)
    c_val, grad_x_val, grad_y_val, grad_z_val = out
"""


@pytest.mark.parametrize("slide", [SIMPLE_GRAPH, BASIC_GRAPH], ids=["shapes", "no-shapes"])
def test_computational_graph_and_its_gradients(slide):
    ran = run_tf1(slide)
    x, y, z = (ran["values"][ran[name]] for name in "xyz")
    np.testing.assert_allclose(ran["c_val"], np.sum(x * y + z), rtol=1e-5)
    np.testing.assert_allclose(ran["grad_x_val"], y, rtol=1e-6)       # mul switches
    np.testing.assert_allclose(ran["grad_y_val"], x, rtol=1e-6)
    np.testing.assert_array_equal(ran["grad_z_val"], np.ones((3, 4)))


FEEDING_THE_WEIGHTS = """\
N = x_train.shape[0] # number of samples
D = x_train.shape[1] # dimension of input sample
n_classes = 10        # output dim


x = tf.placeholder(tf.float32, shape=(N, D))
y = tf.placeholder(tf.float32, shape=(N, n_classes))
w1 = tf.placeholder(tf.float32, shape=(D, n_classes))

y_pred = tf.maximum(tf.matmul(x, w1), 0) # ReLU on logit
diff = y_pred - y
loss = tf.reduce_mean(tf.reduce_sum(diff ** 2, axis=1))

grad_w1 = tf.gradients(loss, [w1])[0] # returns a list of
# sums of gradients

with tf.Session() as sess:
    values = {
        x: x_train,
        y: y_train,
        w1: np.random.randn(D, n_classes)
    }
    alpha = 1e-3
    J = []
    for epoch in range(20):
        out = sess.run([loss, grad_w1], feed_dict=values)
        loss_val, grad_w1_val = out
        values[w1] -= alpha * grad_w1_val
        J.append(loss_val)
        print("epoch", epoch, loss_val)
pl.plot(J)
"""

VARIABLE_AND_GROUP = """\

N = x_train.shape[0] # number of samples
D = x_train.shape[1] # dimension of input sample
n_classes = 10        # output dim

x = tf.placeholder(tf.float32, shape=(N, D))
y = tf.placeholder(tf.float32, shape=(N, n_classes))
w1 = tf.Variable(tf.random_normal((D, n_classes)))

y_pred = tf.maximum(tf.matmul(x, w1), 0.0) # ReLU on logit
diff = y_pred - y
loss = tf.reduce_mean(tf.reduce_sum(diff ** 2, axis=1))
grad_w1 = tf.gradients(loss, [w1])[0] # returns a list of
# sums of gradients

alpha = 1e-3
new_w1 = w1.assign(w1 - alpha * grad_w1)
updates = tf.group(new_w1)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    values = { x: x_train, y: y_train}
    J = []
    for epoch in range(20):
        loss_val = sess.run([loss, updates], feed_dict=values)
        J.append(loss_val)
        print("epoch", epoch, loss_val)
    pl.plot(J)
"""

DENSE_LAYER = """\
N = x_train.shape[0] # number of samples
D = x_train.shape[1] # dimension of input sample
n_classes = 10        # output dim

x = tf.placeholder(tf.float32, shape=(N, D))
y = tf.placeholder(tf.float32, shape=(N, n_classes))

init = tf.variance_scaling_initializer(2.0) # He init
y_pred = tf.layers.dense(inputs=x, units=n_classes,
                        activation=tf.nn.relu,
                        kernel_initializer=init)

loss = tf.losses.mean_squared_error(y_pred, y)

optimizer = tf.train.GradientDescentOptimizer(1e-2)
updates = optimizer.minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    values = { x: x_train, y: y_train}
    J = []
    for epoch in range(20):
        loss_val = sess.run([loss, updates],
                           feed_dict=values)
        J.append(loss_val)
        print("epoch", epoch, loss_val[0])
pl.plot(J)
"""


@pytest.mark.parametrize("slide", [FEEDING_THE_WEIGHTS, VARIABLE_AND_GROUP, DENSE_LAYER],
                         ids=["fed-weights", "variable-group", "dense-layer"])
def test_digits_regression_programs_train(slide, capsys):
    x_train, y_train = digits_one_hot()
    pl = plot_recorder()
    run_tf1(slide, x_train=x_train, y_train=y_train, pl=pl)
    losses = [float(np.ravel(j)[0]) for j in pl.plotted[0]]
    assert len(losses) == 20 and losses[-1] < losses[0]
    assert capsys.readouterr().out.count("epoch") == 20


def test_tensorboard_graph_of_a_plus_b(tmp_path, capsys):
    run_tf1("""\
import tensorflow as tf

a = tf.constant(2)
b = tf.constant(3)
x = tf.add(a, b)

writer = tf.summary.FileWriter('./graphs', tf.get_default_graph())
with tf.Session() as sess:
    print(sess.run(x))
writer.close()

# $ tensorboard --logdir=graphs/
# then browse to http://localhost:6006
""")
    assert capsys.readouterr().out == "5\n"
    graph = read_events(tmp_path / "graphs").Graph()
    assert [(n.name, n.op, list(n.input)) for n in graph.node] == \
        [("Const", "Const", []), ("Const_1", "Const", []), ("Add", "Add", ["Const", "Const_1"])]


@pytest.mark.parametrize("slide, printed", [
    ("import tensorflow as tf\nw = tf.Variable(10)\nprint(w)\n"
     "# <tf.Variable shape=() dtype=int32_ref>\n", "<eg.Variable 'Variable:0' shape=() "
     "dtype=int32>\n"),
    ("import tensorflow as tf\nw = tf.Variable(10)\nwith tf.Session() as sess:\n"
     "    sess.run(w.initializer)\n    print(sess.run(w))      # 10\n", "10\n"),
    ("import tensorflow as tf\nw = tf.Variable(10)\nwith tf.Session() as sess:\n"
     "    sess.run(w.initializer)\n    w.assign(100)\n    print(sess.run(w)) # 10\n", "10\n"),
    ("import tensorflow as tf\nw = tf.Variable(10)\nwith tf.Session() as sess:\n"
     "    sess.run(w.initializer)\n    assign_op = w.assign(100)\n    sess.run(assign_op)\n"
     "    print(sess.run(w)) # 100\n", "100\n"),
    ("# create a placeholder of type float 32-bit, shape is a vector of 3 elements\n"
     "a = tf.placeholder(tf.float32, shape=[3])\n\nb = tf.constant([5, 5, 5], tf.float32)\n\n"
     "# use the placeholder as you would a constant or a variable\nadd_op = tf.add(a,b)\n\n"
     "with tf.Session() as sess:\n    print(sess.run(add_op, {a: [1, 2, 3]})) # [6, 7, 8]\n",
     "[6. 7. 8.]\n"),
], ids=["print-variable", "initializer", "unrun-assign", "run-assign", "placeholder"])
def test_variables_and_placeholders_slides(slide, printed, capsys):
    run_tf1(slide)
    assert capsys.readouterr().out == printed


def test_reading_a_variable_before_its_initializer_is_tfs_error():
    with pytest.raises(FailedPreconditionError, match="uninitialized value Variable"):
        run_tf1("import tensorflow as tf\nw = tf.Variable(10)\nwith tf.Session() as sess:\n"
                "    print(sess.run(w))\n")


def test_a_hidden_layer_is_built():
    ran = run_tf1("""\
import tensorflow as tf

b = tf.Variable(tf.zeros((100,)))
W = tf.Variable(tf.random_uniform((784, 100), -1, 1))

x = tf.placeholder(tf.float32, (1, 784))


h = tf.nn.relu(tf.matmul(x, W) + b)
""")
    assert ran["h"].shape == (1, 100) and ran["h"].op.type == "Relu"


SAMPLE_PROGRAM = """\
import tensorflow as tf
import numpy as np
import os

N, D, H = 64, 1000, 100
x = tf.placeholder(tf.float32, shape=(N,D), name='x')
y = tf.placeholder(tf.float32, shape=(N,D), name='y')
w1 = tf.Variable(tf.random_normal((D,H)), name='w1')
w2 = tf.Variable(tf.random_normal((H,D)), name='w2')

h = tf.maximum(tf.matmul(x,w1),0 ,name='h')
y_pred = tf.matmul(h,w2, name='y_pred')
diff = y_pred - y
loss = tf.reduce_mean( tf.reduce_sum(diff**2, axis=1) , name='loss')
grad1, grad2 = tf.gradients(loss, [w1, w2])

learning_rate = 1e-5
new_w1 = w1.assign(w1 - learning_rate * grad1 , name='update_w1')
new_w2 = w2.assign(w2 - learning_rate * grad2, name='update_w2')
updates = tf.group(new_w1, new_w2)
"""

SAMPLE_PROGRAM_RUN = """\
if not os.path.exists('summaries'):
    os.mkdir('summaries')
if not os.path.exists(os.path.join('summaries', 'second')):
    os.mkdir(os.path.join('summaries', 'second'))

with tf.Session() as sess:
    summ_writer = tf.summary.FileWriter(os.path.join('summaries', 'second'),
    sess.graph)

    sess.run(tf.global_variables_initializer())
    values = {x: np.random.randn(N, D),
              y: np.random.randn(N,D)}
    losses = []
    for t in range(50):
        loss_val, _ = sess.run([loss, updates], feed_dict=values)
        #summ_writer.add_summary(loss_val, t)
        print(t, loss_val)
"""


def test_sample_program_writes_its_graph_for_tensorboard(tmp_path, capsys):
    ran = run_tf1(SAMPLE_PROGRAM + SAMPLE_PROGRAM_RUN)
    ran["summ_writer"].close()              # (the slide leaves it to the program's end)
    printed = capsys.readouterr().out.splitlines()
    losses = [float(line.split()[1]) for line in printed]
    assert len(losses) == 50 and losses[-1] < losses[0] / 2
    names = {node.name for node in read_events(tmp_path / "summaries" / "second").Graph().node}
    assert {"x", "y", "w1", "w2", "h", "y_pred", "loss", "update_w1", "update_w2"} <= names
    assert os.path.isdir(tmp_path / "summaries" / "second")


def test_graph_as_graph_def_for_show_graph():
    """``show_graph`` is the notebook's own helper (it embeds TensorBoard's graph view in a
    page); a stand-in keeps the GraphDef it is given."""
    shown = []
    run_tf1("""\
import tensorflow as tf

graph = tf.Graph()

with graph.as_default():
    a = tf.constant(10, tf.float32, name= 'a')

    b = tf.constant(-5, tf.float32, name= 'b')

    c = tf.constant(4, tf.float32, name= 'c')


    x = tf.placeholder(tf.float32, name= 'x')


    y = a * x * x + b * x + c
show_graph(graph.as_graph_def())
""", show_graph=shown.append)
    nodes = [(n.name, n.op, list(n.input)) for n in shown[0].node]
    assert nodes == [("a", "Const", []), ("b", "Const", []), ("c", "Const", []),
                     ("x", "Placeholder", []), ("Mul", "Mul", ["a", "x"]),
                     ("Mul_1", "Mul", ["Mul", "x"]), ("Mul_2", "Mul", ["b", "x"]),
                     ("Add", "Add", ["Mul_1", "Mul_2"]), ("Add_1", "Add", ["Add", "c"])]


def test_quadratic_minimised_step_by_step(capsys):
    run_tf1("""\
import tensorflow as tf

# Graph definition
a = tf.constant(10, tf.float32, name= 'a')
b = tf.constant(-5, tf.float32, name= 'b')
c = tf.constant(4, tf.float32, name= 'c')
x = tf.Variable(0.0, name= 'x')
y = a * x * x + b * x + c
optimizer = tf.train.GradientDescentOptimizer(0.02)
update = optimizer.minimize(y)

# Graph execution
sess = tf.Session()
sess.run(tf.global_variables_initializer())
for i in range(20):
    val_y, val_x, _ = sess.run([y, x, update])
    print(i, val_x, val_y)
sess.close()
""")
    printed = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert len(printed) == 20
    assert [(round(float(v_x), 5), round(float(v_y), 5)) for _, v_x, v_y in printed[:2]] == \
        [(0.1, 4.0), (0.16, 3.6)]
    assert float(printed[-1][1]) == pytest.approx(0.25, abs=1e-3)     # the minimum, x = 1/4


# ----------------------------------------------------------------------------- TF 1.x eager
def test_tfe_gradients_function_and_a_tfe_variable_on_the_tape(capsys):
    ran = run_tf1_eager("""\
import tensorflow as tf
tf.enable_eager_execution()
tfe = tf.contrib.eager

def f(x):
    return tf.square(x)

grads = tfe.gradients_function(f)
grads(3.0) # 6.0
""")
    assert [g.item() for g in ran["grads"](3.0)] == [6.0]
    run("""\
c = tfe.Variable([[2.0]])
d = tfe.Variable([[3.0]])
with tf.GradientTape() as tape:
    loss = c * d

grad = tape.gradient(loss, d)
print(grad) # 2.0
""", ran)
    assert capsys.readouterr().out == "tensor([[2.]])\n"


@pytest.mark.parametrize("slide, printed", [
    ("import tensorflow as tf\ntf.enable_eager_execution()\n\n"
     "print(tf.executing_eagerly()) # True\n\ngraph = tf.Graph()\nwith graph.as_default():\n"
     "    print(tf.executing_eagerly()) # False\n", "True\nFalse\n"),
    ("import tensorflow as tf\ntf.enable_eager_execution()\n\n@tf.contrib.eager.defun\n"
     "def square_sum(x, y):\n    return tf.square(x+y)\n\nresult = square_sum(2., 3.)\n"
     "print(result.numpy()) # 25\n", "25.0\n"),
], ids=["executing-eagerly", "defun"])
def test_eager_preview_slides(slide, printed, capsys):
    run_tf1_eager(slide)
    assert capsys.readouterr().out == printed


# ----------------------------------------------------------------------------- input pipeline
def test_file_pipeline_reads_the_digits_from_tfrecord_files(tmp_path):
    """The input-pipeline slide's five lines (TF2 code: ``tf.`` → ``eg.``), over the digits
    written as 4 TFRecord files (each record: 64 pixels and the label, as float32 bytes).
    Every image comes out once."""
    (images, labels), _ = eg.datasets.load_digits()
    rows = np.concatenate([images.reshape(-1, 64), labels[:, None]], axis=1).astype(np.float32)
    for part in range(4):
        with eg.io.TFRecordWriter(str(tmp_path / f"digits-{part}.tfrecord")) as writer:
            for row in rows[part::4]:
                writer.write(row.tobytes())

    def parser_fn(record):
        values = eg.io.decode_raw(record, eg.float32)
        return eg.reshape(values[:64], (8, 8)), eg.cast(values[64], eg.int64)

    ran = run("""\
files = tf.data.Dataset.list_files(file_pattern)
dataset = tf.data.TFRecordDataset(files, num_parallel_reads=40)
dataset = dataset.map(parser_fn, num_parallel_calls=40)
dataset = dataset.batch(batch_size)
dataset = dataset.prefetch(1)
""", dict(tf=eg, file_pattern=str(tmp_path / "digits-*.tfrecord"), parser_fn=parser_fn,
           batch_size=32))
    batches = list(ran["dataset"])
    assert [x.shape for x, _ in batches[:1]] == [(32, 8, 8)] and len(batches) == 45
    read = np.concatenate([np.concatenate([x.numpy().reshape(-1, 64), y.numpy()[:, None]], 1)
                           for x, y in batches])
    assert sorted(map(bytes, read.astype(np.float32))) == sorted(map(bytes, rows))
