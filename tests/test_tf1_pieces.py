"""TF1's pieces that copied programs need: ``eg.train.Saver`` and its checkpoint files,
``Variable.load``, ``eg.nn.bias_add``, the eager preview ``edugraph.contrib.eager`` and TF's
migration idiom ``import edugraph.compat.v1 as tf``."""
import os
import zipfile

import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from edugraph.graph.session import building_state_kept


@pytest.fixture
def tf1_state():
    """For tests that switch eager execution off: put the mode and default graph back."""
    with building_state_kept():
        eg.reset_default_graph()
        yield


def small_model():
    """A TF1 regression model trained by Adam (whose slots are variables too)."""
    x = eg.placeholder(eg.float32, shape=(None, 3), name="x")
    y = eg.placeholder(eg.float32, shape=(None, 1), name="y")
    with eg.name_scope("layer"):
        w = eg.Variable(eg.random_normal((3, 1), seed=1), name="w")
        b = eg.Variable(eg.zeros((1,)), name="b")
    loss = eg.reduce_mean((eg.matmul(x, w) + b - y) ** 2)
    train = eg.train.AdamOptimizer(0.1).minimize(loss)
    rng = np.random.default_rng(0)
    data = rng.normal(size=(20, 3)).astype(np.float32)
    feed = {x: data, y: data @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3}
    return w, b, train, feed


# ----------------------------------------------------------------------------- Saver
def test_restored_training_continues_exactly_where_the_saved_one_was(tmp_path):
    with eg.Graph().as_default():
        w, b, train, feed = small_model()
        saver = eg.train.Saver()                # after minimize: Adam's slots are saved too
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            for _ in range(3):
                sess.run(train, feed)
            path = saver.save(sess, str(tmp_path / "model.ckpt"))
            for _ in range(3):
                sess.run(train, feed)
            trained_on = sess.run([w, b])
        with eg.Session() as sess:              # no initializer: restore sets every variable
            saver.restore(sess, eg.train.latest_checkpoint(str(tmp_path)))
            for _ in range(3):
                sess.run(train, feed)
            np.testing.assert_array_equal(sess.run([w, b])[0], trained_on[0])
            np.testing.assert_array_equal(sess.run([w, b])[1], trained_on[1])
    assert path == str(tmp_path / "model.ckpt")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt.npz"]


def test_the_checkpoint_is_a_plain_npz_keyed_by_variable_name(tmp_path):
    with eg.Graph().as_default():
        w = eg.Variable([[1.0, 2.0]], name="w")
        with eg.name_scope("layer"):
            b = eg.Variable([3, 4], name="b")
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            eg.train.Saver([w, b]).save(sess, str(tmp_path / "m"))
    with np.load(tmp_path / "m.npz", allow_pickle=False) as stored:
        assert sorted(stored.files) == ["layer/b", "w"]
        np.testing.assert_array_equal(stored["w"], [[1.0, 2.0]])
        assert stored["layer/b"].dtype == np.int32


def test_checkpoint_file_names_the_latest_as_tf_writes_it_and_max_to_keep_deletes(tmp_path):
    with eg.Graph().as_default():
        step = eg.Variable(0, name="global_step", trainable=False)
        advance = step.assign_add(1)
        saver = eg.train.Saver(max_to_keep=2)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            for _ in range(3):
                sess.run(advance)
                saved = saver.save(sess, str(tmp_path / "model"), global_step=step)
            assert saver.save(sess, str(tmp_path / "model"), global_step=10).endswith("model-10")
    assert saved == str(tmp_path / "model-3")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-10.npz", "model-3.npz"]
    assert (tmp_path / "checkpoint").read_text() == (
        'model_checkpoint_path: "model-10"\n'
        'all_model_checkpoint_paths: "model-3"\n'
        'all_model_checkpoint_paths: "model-10"\n')
    state = eg.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == str(tmp_path / "model-10")
    assert state.all_model_checkpoint_paths == [str(tmp_path / "model-3"),
                                                str(tmp_path / "model-10")]


def test_latest_checkpoint_is_none_without_a_checkpoint_or_when_its_file_is_gone(tmp_path):
    assert eg.train.latest_checkpoint(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "gone"\n')
    assert eg.train.latest_checkpoint(str(tmp_path)) is None
    (tmp_path / "gone.npz").write_bytes(b"")
    assert eg.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "gone")
    (tmp_path / "checkpoint").write_text("this is not a checkpoint state\n")
    with pytest.raises(ValueError, match="line 1"):
        eg.train.latest_checkpoint(str(tmp_path))


def test_restore_refuses_a_checkpoint_of_another_model_with_the_reason(tmp_path):
    with eg.Graph().as_default():
        w = eg.Variable(np.zeros(3, np.float32), name="w")
        with eg.Session() as sess:
            sess.run(w.initializer)
            eg.train.Saver().save(sess, str(tmp_path / "three"))
    with eg.Graph().as_default():
        w = eg.Variable(np.zeros(4, np.float32), name="w")
        v = eg.Variable(np.zeros(3, np.float32), name="v")
        with eg.Session() as sess:
            with pytest.raises(InvalidArgumentError, match=r"'w'.*shape \(3,\).*shape \(4,\)"):
                eg.train.Saver([w]).restore(sess, str(tmp_path / "three"))
            with pytest.raises(NotFoundError, match="Key v not found in checkpoint"):
                eg.train.Saver([v]).restore(sess, str(tmp_path / "three"))
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                eg.train.Saver([w]).restore(sess, str(tmp_path / "nothing"))
            with pytest.raises(ValueError, match="without .npz"):
                eg.train.Saver([w]).restore(sess, str(tmp_path / "three.npz"))
            with pytest.raises(ValueError, match="it is None"):
                eg.train.Saver([w]).restore(sess, eg.train.latest_checkpoint(str(tmp_path / "x")))


def test_restore_reads_data_and_never_unpickles(tmp_path):
    """A checkpoint holding a pickled object (which could run code when loaded) is refused,
    and so is a file that is not a zip archive; both errors name the file."""
    with zipfile.ZipFile(tmp_path / "evil.npz", "w") as archive:
        with archive.open("w.npy", "w") as member:
            np.lib.format.write_array(member, np.array([{"a": 1}], dtype=object))
    (tmp_path / "junk.npz").write_bytes(b"not a zip file")
    with eg.Graph().as_default():
        w = eg.Variable([1.0], name="w")
        with eg.Session() as sess:
            for name in ("evil", "junk"):
                with pytest.raises(ValueError, match=f"{name}.npz is not a checkpoint"):
                    eg.train.Saver([w]).restore(sess, str(tmp_path / name))


def test_save_needs_initialised_variables_and_an_existing_folder(tmp_path):
    with eg.Graph().as_default():
        w = eg.Variable([1.0], name="w")
        saver = eg.train.Saver()
        with eg.Session() as sess:
            with pytest.raises(FailedPreconditionError, match="uninitialized value w"):
                saver.save(sess, str(tmp_path / "m"))
            sess.run(w.initializer)
            with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
                saver.save(sess, str(tmp_path / "no" / "m"))
        with eg.Graph().as_default():
            with pytest.raises(TypeError, match="another graph"):
                saver.save(eg.Session(), str(tmp_path / "m"))
    assert os.listdir(tmp_path) == []


def test_saver_saves_graph_variables_and_says_what_to_use_for_eager_ones():
    with pytest.raises(TypeError, match="save_weights"):
        eg.train.Saver([eg.Variable(1.0)])
    with eg.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            eg.train.Saver()


# ----------------------------------------------------------------------------- Variable.load
def test_variable_load_writes_a_value_without_running_the_initializer():
    with eg.Graph().as_default():
        w = eg.Variable(eg.random_normal((2,)), name="w")
        doubled = w * 2
        with eg.Session() as sess:
            w.load([1.0, 2.0], sess)
            np.testing.assert_array_equal(sess.run(doubled), [2.0, 4.0])
            with sess.as_default():
                w.load(np.array([3.0, 4.0]))
                np.testing.assert_array_equal(w.eval(), [3.0, 4.0])
            with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\)"):
                w.load([1.0, 2.0, 3.0], sess)
        with pytest.raises(ValueError, match="give the session"):
            w.load([1.0, 2.0])


def test_eager_variable_load_assigns():
    v = eg.Variable([1.0, 2.0])
    v.load([5.0, 6.0])
    np.testing.assert_array_equal(v.numpy(), [5.0, 6.0])


# ----------------------------------------------------------------------------- bias_add
def test_bias_add_adds_along_the_channels_eagerly_and_in_a_graph():
    rng = np.random.default_rng(0)
    images = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    bias = np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(eg.nn.bias_add(eg.tensor(images), bias).numpy(), images + bias)
    np.testing.assert_allclose(eg.nn.bias_add(images, bias[:3], data_format="NCHW").numpy(),
                               images + bias[:3, None, None])
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(None, 5))
        b = eg.Variable(np.zeros(5, np.float32))
        out = eg.nn.bias_add(x, b)
        grad_b, = eg.gradients(eg.reduce_sum(out * out), [b])
        with eg.Session() as sess:
            sess.run(b.initializer)
            value, grad = sess.run([out, grad_b], {x: images[0, 0]})
    np.testing.assert_allclose(value, images[0, 0])
    np.testing.assert_allclose(grad, 2 * images[0, 0].sum(axis=0), rtol=1e-6)


@pytest.mark.parametrize("value_shape, bias_shape, data_format, message", [
    ((2, 3), (2,), None, "as many biases as the input has channels"),
    ((2, 3, 4), (4,), "NCW", "as many biases"),
    ((2, 3), (1, 3), None, "must be 1-D"),
    ((3,), (3,), None, "at least 2-D"),
])
def test_bias_add_refuses_a_bias_that_plain_broadcasting_would_accept(value_shape, bias_shape,
                                                                      data_format, message):
    with pytest.raises(ValueError, match=message):
        eg.nn.bias_add(np.ones(value_shape), np.ones(bias_shape), data_format=data_format)


# ----------------------------------------------------------------------------- contrib.eager
def test_contrib_eager_is_a_module_with_the_gradient_functions():
    import edugraph.contrib.eager as tfe

    assert eg.contrib.eager is tfe
    assert tfe.defun is eg.function and tfe.Variable is eg.Variable
    assert tfe.GradientTape is eg.GradientTape

    def f(x, y):
        return x * x * y

    grads = tfe.gradients_function(f)
    gx, gy = grads(3.0, 2.0)
    assert (gx.item(), gy.item()) == (12.0, 9.0)
    assert tfe.gradients_function(f, params=["y"])(3.0, 2.0)[0].item() == 9.0
    assert tfe.gradients_function(f, params=[0])(3.0, 2.0)[0].item() == 12.0
    value, (gx,) = tfe.value_and_gradients_function(f, params=[0])(3.0, 2.0)
    assert (value.item(), gx.item()) == (18.0, 12.0)
    with pytest.raises(ValueError, match="no parameter 'z'"):
        tfe.gradients_function(f, params=["z"])


def test_implicit_gradients_pair_each_used_variable_with_its_gradient():
    import edugraph.contrib.eager as tfe

    w, b, unused = eg.Variable([1.0, 2.0]), eg.Variable(0.5), eg.Variable(7.0)
    frozen = eg.Variable(3.0, trainable=False)

    def loss(x):
        return eg.reduce_sum((w * x + b) ** 2) * frozen

    x = eg.tensor([1.0, -1.0])
    value, pairs = tfe.implicit_value_and_gradients(loss)(x)
    assert [v is w for _, v in pairs] == [True, False] and pairs[1][1] is b
    residual = np.array([1.0, 2.0]) * [1.0, -1.0] + 0.5            # (1.5, -1.5)
    np.testing.assert_allclose(pairs[0][0].numpy(), 3 * 2 * residual * [1.0, -1.0])
    np.testing.assert_allclose(pairs[1][0].numpy(), 3 * 2 * residual.sum())
    assert value.item() == pytest.approx(3 * (residual ** 2).sum())
    assert len(tfe.implicit_gradients(loss)(x)) == 2
    with pytest.raises(ValueError, match="No trainable variables"):
        tfe.implicit_gradients(lambda: eg.tensor(2.0) * 3)()
    assert unused.numpy() == 7.0


# ----------------------------------------------------------------------------- compat.v1
def test_compat_v1_is_edugraph_with_disable_v2_behavior(tf1_state):
    import edugraph.compat.v1 as tf

    assert tf.placeholder is eg.placeholder and tf.train.Saver is eg.train.Saver
    assert eg.compat.v1 is tf and "disable_v2_behavior" in dir(tf)
    assert "placeholder" in dir(tf)
    tf.disable_v2_behavior()
    assert not tf.executing_eagerly()
    h = tf.ones((200, 200))
    kept = tf.nn.dropout(h, 0.9)               # TF1's keep_prob, by position
    assert h.graph is tf.get_default_graph()
    with tf.Session() as sess:
        assert 0.88 < np.mean(sess.run(kept) != 0) < 0.92
    tf.enable_v2_behavior()
    assert tf.executing_eagerly()


def test_tf1_set_random_seed_repeats_a_graphs_random_numbers():
    tf = eg.compat.v1

    def draw():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            noise = tf.random_normal((3,))
            with tf.Session() as sess:
                return sess.run(noise)
    first = draw()
    np.testing.assert_array_equal(draw(), first)
    assert len(set(first.tolist())) == 3
