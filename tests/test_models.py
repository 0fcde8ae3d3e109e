"""Keras-style models: Sequential, functional, subclassed; fit/evaluate/predict, callbacks,
saving, summaries, and the same layers inside a TF1 Session graph."""
import re

import numpy as np
import pytest

import edugraph as eg
from edugraph import layers


@pytest.fixture(scope="module")
def digits():
    return eg.datasets.load_digits()


def mlp():
    return eg.Sequential([layers.Flatten(input_shape=(8, 8)), layers.Dense(32, activation="relu"),
                          layers.Dense(10, activation="softmax")])


def test_mlp_learns_digits_quickly(digits):
    (x, y), (x_test, y_test) = digits
    model = mlp()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.optimizer.learning_rate = 0.01
    history = model.fit(x, y, epochs=4, batch_size=64, verbose=0,
                        validation_data=(x_test, y_test))
    assert history.epoch == [0, 1, 2, 3]
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    loss, accuracy = model.evaluate(x_test, y_test)
    assert accuracy >= 0.9
    np.testing.assert_allclose(history.history["val_accuracy"][-1], accuracy)
    probs = model.predict(x_test)
    assert probs.shape == (len(x_test), 10)
    np.testing.assert_allclose(probs.sum(1), 1, rtol=1e-5)
    np.testing.assert_allclose((probs.argmax(1) == y_test).mean(), accuracy)


def test_fit_on_the_stand_in_accelerator_and_from_a_dataset(digits):
    (x, y), _ = digits
    ds = eg.data.Dataset.from_tensor_slices((x[:256, ..., None], y[:256])).batch(64)
    with eg.device("sim:0"):
        model = eg.Sequential([layers.Conv2D(4, 3, activation="relu"), layers.MaxPooling2D(),
                               layers.Flatten(), layers.Dense(10)])
        model.compile("sgd", eg.losses.SparseCategoricalCrossentropy(from_logits=True),
                      ["accuracy"])
        history = model.fit(ds, epochs=2, verbose=0)
        assert model.layers[0].kernel.device.name == "sim:0"
    assert len(history.history["accuracy"]) == 2
    with pytest.raises(ValueError, match="infinite"):       # an epoch that would never end
        model.fit(ds.repeat(), epochs=1, verbose=0)


def test_functional_model_with_two_inputs_two_outputs_and_a_shared_layer():
    a, b = eg.Input((3,), name="a"), eg.Input((3,), name="b")
    shared = layers.Dense(4, activation="tanh")
    merged = layers.Concatenate()([shared(a), shared(b)])
    out1, out2 = layers.Dense(1)(merged), layers.Dense(2, activation="softmax")(merged)
    model = eg.Model([a, b], [out1, out2])
    assert model.output_shape == [(None, 1), (None, 2)]
    assert len(model.trainable_variables) == 6               # the shared layer counted once
    xa, xb = np.random.default_rng(0).normal(size=(2, 5, 3)).astype(np.float32)
    y1, y2 = model([eg.tensor(xa), eg.tensor(xb)])
    head = model.layers[-1]
    by_hand = eg.concat([shared(eg.tensor(xa)), shared(eg.tensor(xb))], axis=-1)
    np.testing.assert_allclose(y2.numpy(), head(by_hand).numpy(), rtol=1e-6)
    model.compile("adam", loss=["mse", "sparse_categorical_crossentropy"])
    history = model.fit([xa, xb], [np.ones((5, 1)), np.array([0, 1, 0, 1, 1])], epochs=2,
                        verbose=0)
    assert len(history.history["loss"]) == 2
    with pytest.raises(ValueError, match="not among the model's inputs"):
        eg.Model(a, shared(eg.Input((3,))))


def test_subclassed_models_keras_and_pytorch_style():
    class KerasStyle(eg.Model):
        def __init__(self):
            super().__init__()
            self.dense1 = layers.Dense(16)
            self.dropout = layers.Dropout(0.5)
            self.out = layers.Dense(2)

        def call(self, x, training=False):
            return self.out(self.dropout(self.dense1(x), training=training))

    class TorchStyle(eg.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = eg.nn.Linear(4, 8)
            self.drop = eg.nn.Dropout(0.5)
            self.head = eg.nn.Linear(8, 2)

        def forward(self, x):
            return self.head(self.drop(eg.relu(self.fc(x))))

    x = eg.ones((3, 4))
    keras_model = KerasStyle()
    np.testing.assert_array_equal(keras_model(x).numpy(), keras_model(x).numpy())  # inference
    assert not np.array_equal(keras_model(x, training=True).numpy(),
                              keras_model(x, training=True).numpy())
    torch_model = TorchStyle()
    assert [n for n, _ in torch_model.named_parameters()] == \
        ["fc.weight", "fc.bias", "head.weight", "head.bias"]
    assert not np.array_equal(torch_model(x).numpy(), torch_model(x).numpy())      # training
    torch_model.eval()
    np.testing.assert_array_equal(torch_model(x).numpy(), torch_model(x).numpy())
    loss = torch_model(x).sum()
    loss.backward()
    assert all(p.grad is not None for p in torch_model.parameters())


def test_training_is_handed_down_to_layers_called_without_it():
    """TF2's Keras and Keras 3 hand the flag of a call down to the layers called inside it
    without one (Keras's call context): a subclassed model whose call does not pass training
    on still drops in fit, and not in predict. The flag stopped at the model's call, so such
    a Dropout never dropped, even in fit."""
    seen = []

    class Spy(layers.Layer):
        def call(self, inputs, training=None):
            seen.append(training)
            return inputs

    class Block(layers.Layer):              # a layer inside a layer, told nothing
        def __init__(self):
            super().__init__()
            self.spy, self.dropout = Spy(), layers.Dropout(0.5)

        def call(self, inputs):
            return self.dropout(self.spy(inputs))

    class Net(eg.Model):
        def __init__(self):
            super().__init__()
            self.block, self.out = Block(), layers.Dense(1)
            self.told = Spy()

        def call(self, x):
            return self.out(self.block(x)) + self.told(x, training=False)[:, :1]

    net, x = Net(), np.ones((8, 4), np.float32)
    assert (net.block(eg.tensor(x), training=True).numpy() == 0).any()
    seen.clear()
    net.compile("sgd", "mse")
    net.fit(x, np.ones((8, 1)), epochs=1, verbose=0)
    assert seen == [True, False]            # the layer told training=False keeps it
    seen.clear()
    net.predict(x)
    np.testing.assert_array_equal(net.block(eg.tensor(x)).numpy(), x)  # no flag: inference
    assert seen == [False, False, False]


def test_summary_matches_keras(capsys):
    model = eg.Sequential()
    model.add(layers.Embedding(1000, 64))
    model.summary()
    text = capsys.readouterr().out
    assert re.search(r"embedding(_\d+)? \(Embedding\) +\(None, None, 64\) +64,000", text)
    assert "Total params: 64,000" in text and "Non-trainable params: 0" in text
    bn_model = eg.Sequential([layers.Dense(5, input_shape=(3,)), layers.BatchNormalization()])
    bn_model.summary()
    text = capsys.readouterr().out
    assert "Total params: 40" in text                         # 20 + 4·5
    assert "Trainable params: 30" in text and "Non-trainable params: 10" in text
    with pytest.raises(ValueError, match="not built yet"):
        eg.Sequential([layers.Dense(3)]).summary()


def test_save_and_load_reproduce_predictions_and_training_exactly(tmp_path, digits):
    (x, y), (x_test, _) = digits
    path = tmp_path / "weights.npz"

    def make():
        model = mlp()
        model.compile("adam", "sparse_categorical_crossentropy")
        return model
    model = make()
    model.fit(x[:200], y[:200], epochs=1, batch_size=50, verbose=0)
    model.save_weights(path)
    fresh = make()
    fresh.load_weights(path)
    np.testing.assert_array_equal(fresh.predict(x_test), model.predict(x_test))
    # Adam's moments and step came along: one more identical step gives identical weights.
    batch = x[:50], y[:50]
    model.fit(*batch, epochs=1, batch_size=50, verbose=0, shuffle=False)
    fresh.fit(*batch, epochs=1, batch_size=50, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), fresh.get_weights()):
        np.testing.assert_array_equal(a, b)
    other = eg.Sequential([layers.Flatten(input_shape=(8, 8)), layers.Dense(7)])
    with pytest.raises(ValueError, match="has no weights for|has shape"):
        other.load_weights(path)


def test_early_stopping_restores_the_best_weights(digits):
    (x, y), _ = digits

    class Scripted(eg.models.callbacks.Callback):      # val_loss by script: best at epoch 1
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = [3.0, 1.0, 2.0, 2.5, 2.7, 2.9][epoch]
            if epoch == 1:
                self.best = self.model.get_weights()
            if epoch == 3:                              # runs before EarlyStopping restores
                self.last = self.model.get_weights()
    model = mlp()
    model.compile("sgd", "sparse_categorical_crossentropy")
    script = Scripted()
    stop = eg.models.callbacks.EarlyStopping(patience=2, restore_best_weights=True)
    history = model.fit(x[:64], y[:64], epochs=6, verbose=0, callbacks=[script, stop])
    assert history.epoch == [0, 1, 2, 3] and stop.stopped_epoch == 3
    for a, b in zip(model.get_weights(), script.best):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(script.best, script.last)), \
        "get_weights() snapshots must not follow later training steps"
    with pytest.raises(KeyError, match="val_ numbers need validation_data"):
        model.fit(x[:64], y[:64], epochs=1, verbose=0,
                  callbacks=[eg.models.callbacks.EarlyStopping()])


def test_learning_rate_schedules(digits):
    (x, y), _ = digits
    model = mlp()
    model.compile("sgd", "sparse_categorical_crossentropy")
    schedule = eg.models.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 * 0.5 ** epoch)
    history = model.fit(x[:64], y[:64], epochs=3, verbose=0, callbacks=[schedule])
    assert history.history["lr"] == [0.1, 0.05, 0.025]
    assert model.optimizer.learning_rate == 0.025
    plateau = eg.models.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1,
                                                    min_delta=10.0)     # never "improves"
    model.fit(x[:64], y[:64], epochs=3, verbose=0, callbacks=[plateau])
    assert model.optimizer.learning_rate == pytest.approx(0.025 * 0.25)


def test_progress_output_and_quiet_mode(capsys, digits):
    (x, y), _ = digits
    model = mlp()
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x[:64], y[:64], epochs=2, verbose=0)
    assert capsys.readouterr().out == ""
    model.fit(x[:64], y[:64], epochs=2, verbose=2)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("Epoch 2/2 - 2/2 - ")
    assert "loss: " in lines[1] and "accuracy: " in lines[1]


def test_parameters_modes_and_errors():
    model = eg.Sequential(eg.nn.Linear(3, 4), eg.nn.BatchNorm1d(4), eg.nn.ReLU())
    assert [tuple(p.shape) for p in model.parameters()] == [(4, 3), (4,), (4,), (4,)]
    assert len(model.variables) == 7 and len(model.non_trainable_variables) == 3
    model.eval()
    assert not any(m.training for m in model.modules())
    model.layers[0].trainable = False
    assert len(model.trainable_variables) == 2
    with pytest.raises(ValueError, match="must be compiled"):
        model.fit(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="Unknown optimizer 'adamw'"):
        model.compile("adamw", "mse")
    with pytest.raises(ValueError, match="same number of examples"):
        model.compile("sgd", "mse")
        model.fit(np.ones((2, 3)), np.ones((3, 4)), verbose=0)

    class Forgetful(eg.keras.Model):        # the dropout slide's subclass, abbreviated there
        def __init__(self):
            self.dense1 = layers.Dense(100)

    with pytest.raises(AttributeError, match=r"Forgetful.__init__ must call "
                       r"super\(\).__init__\(\) before it assigns layers or variables "
                       r"\(self.dense1 = ...\)"):
        Forgetful()


def test_layers_build_the_same_maths_in_a_session_graph():
    rng = np.random.default_rng(0)
    images = rng.normal(size=(2, 6, 6, 1)).astype(np.float32)
    model = eg.Sequential([layers.Conv2D(3, 3, padding="same", activation="relu"),
                           layers.MaxPooling2D(), layers.LayerNormalization(),
                           layers.BatchNormalization(), layers.Flatten(), layers.Dense(4)])
    eager = model(eg.tensor(images)).numpy()
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(None, 6, 6, 1))
        y = model(x)
        assert y.shape.as_list() == [None, 4] if hasattr(y.shape, "as_list") else \
            tuple(y.shape) == (None, 4)
        with eg.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {x: images}), eager, rtol=1e-5, atol=1e-6)


def test_tf1_slide_program_trains_in_a_session():
    x_train, y_train = eg.datasets.random_regression(64, 20, 5, seed=1)
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(64, 20))
        y = eg.placeholder(eg.float32, shape=(64, 5))
        init = eg.variance_scaling_initializer(2.0)  # the slide: tf.variance_scaling_initializer
        y_pred = eg.layers.dense(inputs=x, units=5, activation=eg.nn.relu,
                                 kernel_initializer=init)
        loss = eg.losses.mean_squared_error(y_pred, y)
        updates = eg.train.GradientDescentOptimizer(1e-1).minimize(loss)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            values = {x: x_train, y: y_train}
            history = [sess.run([loss, updates], feed_dict=values)[0] for _ in range(20)]
    assert history[-1] < history[0]


def test_batch_norm_trains_in_a_graph_through_update_ops():
    rng = np.random.default_rng(1)
    batch = rng.normal(3.0, 2.0, size=(16, 4)).astype(np.float32)
    with eg.Graph().as_default() as graph:
        x = eg.placeholder(eg.float32, shape=(None, 4))
        layer = layers.BatchNormalization(momentum=0.5)
        y = layer(x, training=True)
        updates = graph.get_collection("update_ops")
        assert len(updates) == 2
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            out, _ = sess.run([y, updates], {x: batch})
            moving_mean = sess.run(layer.moving_mean)
    np.testing.assert_allclose(out.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(moving_mean, 0.5 * batch.mean(0), rtol=1e-5)
    eager_layer = layers.BatchNormalization()
    eager_layer(eg.tensor(batch))
    with eg.Graph().as_default():
        with pytest.raises(ValueError, match="built outside this graph"):
            eager_layer(eg.placeholder(eg.float32, shape=(None, 4)), training=True)


def test_tf1_batch_norm_and_dropout_switched_by_an_is_training_placeholder():
    """TF1's pattern: ``is_training = tf.placeholder_with_default(False, ())`` switches
    tf.layers.batch_normalization and tf.layers.dropout when the graph runs; the moving
    averages move only through UPDATE_OPS run with the train op, and only while training."""
    rng = np.random.default_rng(2)
    batch = rng.normal(3.0, 2.0, size=(32, 4)).astype(np.float32)
    targets = rng.normal(size=(32, 1)).astype(np.float32)
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, [None, 4])
        y = eg.placeholder(eg.float32, [None, 1])
        is_training = eg.placeholder_with_default(False, shape=(), name="is_training")
        normed = eg.layers.batch_normalization(x, momentum=0.5, training=is_training)
        dropped = eg.layers.dropout(normed, rate=0.5, training=is_training)
        loss = eg.reduce_mean(eg.square(eg.layers.dense(dropped, 1) - y))
        update_ops = eg.get_collection(eg.GraphKeys.UPDATE_OPS)
        assert len(update_ops) == 2
        with eg.control_dependencies(update_ops):
            train_op = eg.train.GradientDescentOptimizer(0.1).minimize(loss)
        moving_mean = [v for v in eg.global_variables() if "moving_mean" in v.name][0]
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            inferred, kept = sess.run([normed, dropped], {x: batch})    # not training
            sess.run(update_ops, {x: batch})            # updates while not training: no move
            unmoved = sess.run(moving_mean)
            trained, dropped_out = sess.run([normed, dropped], {x: batch, is_training: True})
            sess.run(train_op, {x: batch, y: targets, is_training: True})
            moved = sess.run(moving_mean)
    np.testing.assert_allclose(inferred, batch / np.sqrt(1 + 1e-3), rtol=1e-6)  # mean 0, var 1
    np.testing.assert_array_equal(kept, inferred)
    np.testing.assert_array_equal(unmoved, 0.0)
    np.testing.assert_allclose(trained, (batch - batch.mean(0)) / np.sqrt(batch.var(0) + 1e-3),
                               rtol=1e-4, atol=1e-5)
    zeroed = dropped_out == 0
    assert 0.3 < zeroed.mean() < 0.7
    np.testing.assert_allclose(dropped_out[~zeroed], 2 * trained[~zeroed], rtol=1e-6)
    np.testing.assert_allclose(moved, 0.5 * batch.mean(0), rtol=1e-5)


def test_progress_in_a_notebook_is_one_updating_html_widget(monkeypatch, capsys, digits):
    pytest.importorskip("ipywidgets")
    import IPython.display
    shown = []
    monkeypatch.setattr(eg.models.callbacks, "in_notebook", lambda: True)
    monkeypatch.setattr(IPython.display, "display", shown.append)
    (x, y), _ = digits
    model = mlp()
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x[:64], y[:64], epochs=3, batch_size=16, verbose=1)
    assert capsys.readouterr().out == ""                      # nothing printed: the widget shows it
    (widget,) = shown
    lines = widget.value.split("<pre style='margin:0'>")[1].split("</pre>")[0].splitlines()
    assert [line.split(" - ")[0] for line in lines] == ["Epoch 1/3", "Epoch 2/3", "Epoch 3/3"]
    assert all(" - 4/4 - " in line and "accuracy: " in line for line in lines)


def test_tf2_beginner_quickstart_as_written(digits):
    """TF2's "quickstart for beginners", ``tf.`` → ``eg.``, on the 8×8 digits instead of
    MNIST (no downloads): models.Sequential, logits, a loss object, fit, evaluate, Softmax."""
    tf = eg
    (x_train, y_train), (x_test, y_test) = digits
    model = tf.keras.models.Sequential([
        tf.keras.layers.Flatten(input_shape=(8, 8)),
        tf.keras.layers.Dense(128, activation='relu'),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(10)
    ])
    predictions = model(x_train[:1]).numpy()
    assert predictions.shape == (1, 10)
    np.testing.assert_allclose(tf.nn.softmax(predictions).numpy().sum(), 1.0, rtol=1e-6)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    initial_loss = loss_fn(y_train[:1], predictions).numpy()
    assert 0.5 < initial_loss < 5          # the guide: about -log(1/10) = 2.3 untrained
    model.compile(optimizer='adam', loss=loss_fn, metrics=['accuracy'])
    model.fit(x_train, y_train, epochs=5, verbose=0)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    assert accuracy > 0.9
    probability_model = tf.keras.Sequential([model, tf.keras.layers.Softmax()])
    probs = probability_model(x_test[:5]).numpy()
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(probs.argmax(1), model(x_test[:5]).numpy().argmax(1))


def test_tf2_expert_quickstart_as_written(digits, capsys):
    """TF2's "quickstart for experts": a subclassed model, tf.data, a GradientTape step in a
    tf.function, and the running metrics Mean / SparseCategoricalAccuracy updated inside it."""
    tf = eg
    (x_train, y_train), (x_test, y_test) = digits
    x_train = x_train[..., tf.newaxis].astype("float32")
    x_test = x_test[..., tf.newaxis].astype("float32")
    train_ds = tf.data.Dataset.from_tensor_slices(
        (x_train, y_train)).shuffle(10000).batch(32)
    test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(32)

    class MyModel(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.conv1 = tf.keras.layers.Conv2D(32, 3, activation='relu')
            self.flatten = tf.keras.layers.Flatten()
            self.d1 = tf.keras.layers.Dense(128, activation='relu')
            self.d2 = tf.keras.layers.Dense(10)

        def call(self, x):
            x = self.conv1(x)
            x = self.flatten(x)
            x = self.d1(x)
            return self.d2(x)

    model = MyModel()
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()
    train_loss = tf.keras.metrics.Mean(name='train_loss')
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name='train_accuracy')
    test_loss = tf.keras.metrics.Mean(name='test_loss')
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name='test_accuracy')

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)

    @tf.function
    def test_step(images, labels):
        predictions = model(images, training=False)
        t_loss = loss_object(labels, predictions)
        test_loss(t_loss)
        test_accuracy(labels, predictions)

    EPOCHS = 2
    results = []
    for epoch in range(EPOCHS):
        train_loss.reset_state()
        train_accuracy.reset_state()
        test_loss.reset_state()
        test_accuracy.reset_state()
        losses_by_hand, seen = [], 0
        for images, labels in train_ds:
            train_step(images, labels)
            seen += len(labels)
        for test_images, test_labels in test_ds:
            test_step(test_images, test_labels)
            logits = model(test_images).numpy()
            losses_by_hand.append((len(test_labels), logits, test_labels.numpy()))
        print(f'Epoch {epoch + 1}, '
              f'Loss: {train_loss.result()}, '
              f'Accuracy: {train_accuracy.result() * 100}, '
              f'Test Loss: {test_loss.result()}, '
              f'Test Accuracy: {test_accuracy.result() * 100}')
        results.append([m.result().item() for m in (train_loss, train_accuracy, test_loss,
                                                     test_accuracy)])
        assert train_accuracy.count.numpy() == seen == len(x_train)
    printed = capsys.readouterr().out.splitlines()
    as_printed = [str(np.float32(v) * np.float32(100 if i % 2 else 1))
                  for i, v in enumerate(results[-1])]      # float32's digits, as TF prints
    assert printed[-1] == ("Epoch 2, Loss: {}, Accuracy: {}, Test Loss: {}, "
                           "Test Accuracy: {}".format(*as_printed))
    # full batches and the last one, and the first trace's second run (it made Adam's slots)
    assert train_step.experimental_get_tracing_count() <= 3
    # Mean averages what it is given, the batches' mean losses; the accuracy counts examples
    batch_losses = []
    for _, logits, labels in losses_by_hand:
        shifted = logits - logits.max(1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        batch_losses.append(-log_probs[np.arange(len(labels)), labels].mean())
    assert results[-1][2] == pytest.approx(np.mean(batch_losses), rel=1e-5)
    logits, labels = (np.concatenate([b[i] for b in losses_by_hand]) for i in (1, 2))
    assert results[-1][3] == pytest.approx((logits.argmax(1) == labels).mean())
    assert results[-1][1] > 0.9 and results[-1][3] > 0.9
    assert results[1][0] < results[0][0]


def test_running_metrics_weights_resets_and_compile():
    mean = eg.keras.metrics.Mean()
    assert mean.result().item() == 0.0                       # nothing seen yet: 0, as in Keras
    mean([1.0, 2.0, 3.0])
    assert mean(eg.tensor(10.0)).item() == pytest.approx(4.0)
    mean.update_state([2.0, 4.0], sample_weight=[3.0, 1.0])
    assert mean.result().item() == pytest.approx((16.0 + 10.0) / 8.0)
    mean.reset_states()
    assert mean.result().item() == 0.0 and mean.name == "mean"
    accuracy = eg.keras.metrics.SparseCategoricalAccuracy()
    accuracy([2, 0], [[0.1, 0.2, 0.7], [0.5, 0.4, 0.1]])
    accuracy([1], [[0.9, 0.05, 0.05]])
    assert accuracy.result().item() == pytest.approx(2 / 3)
    assert accuracy.name == "sparse_categorical_accuracy"
    per_example = eg.keras.metrics.sparse_categorical_accuracy(     # Keras: one per example
        eg.tensor([2, 1]), eg.tensor([[0.1, 0.2, 0.7], [0.5, 0.4, 0.1]]))
    np.testing.assert_array_equal(per_example.numpy(), [1.0, 0.0])
    binary = eg.keras.metrics.BinaryAccuracy(threshold=0.7)
    assert binary([[1], [0]], [[0.6], [0.2]]).item() == 0.5
    exact = eg.keras.metrics.Accuracy()
    assert exact([1, 2, 3, 4], [0, 2, 3, 4]).item() == 0.75
    model = eg.Sequential([layers.Dense(3, input_shape=(2,), activation="softmax")])
    model.compile("sgd", "sparse_categorical_crossentropy",
                  metrics=[eg.keras.metrics.SparseCategoricalAccuracy(name="acc")])
    x, y = np.random.default_rng(0).normal(size=(8, 2)), np.arange(8) % 3
    logs = model.evaluate(x, y, return_dict=True)
    predicted = model.predict(x).argmax(1)
    assert logs["acc"] == pytest.approx((predicted == y).mean())
    with pytest.raises(TypeError, match="Mean averages values passed to it"):
        model.compile("sgd", "mse", metrics=[eg.keras.metrics.Mean()])


def test_keras_mnist_mlp_example_of_the_dropout_slide(digits):
    """The dropout slide's Sequential model inside the Keras example it comes from
    (mnist_mlp.py: to_categorical labels, RMSprop, categorical cross-entropy), on the digits."""
    keras = eg.keras
    from edugraph.keras.layers import Dense, Dropout
    from edugraph.keras.models import Sequential
    (x_train, y_train), (x_test, y_test) = digits
    num_classes = 10
    x_train, x_test = x_train.reshape(-1, 64), x_test.reshape(-1, 64)
    y_train = keras.utils.to_categorical(y_train, num_classes)
    y_test = keras.utils.to_categorical(y_test, num_classes)
    assert y_train.shape == (len(x_train), 10) and y_train.dtype == np.float32
    np.testing.assert_array_equal(y_test.argmax(1), digits[1][1])
    model = Sequential()
    model.add(Dense(512, activation='relu', input_shape=(64,)))
    model.add(Dropout(rate=0.2))
    model.add(Dense(512, activation='relu'))
    model.add(Dropout(rate=0.2))
    model.add(Dense(num_classes, activation='softmax'))
    model.compile(loss='categorical_crossentropy', optimizer=keras.optimizers.RMSprop(),
                  metrics=['accuracy'])
    history = model.fit(x_train, y_train, batch_size=128, epochs=20, verbose=0,
                        validation_data=(x_test, y_test))
    score = model.evaluate(x_test, y_test, verbose=0)
    assert score[1] > 0.9 and history.history["val_accuracy"][-1] == pytest.approx(score[1])
    with pytest.raises(ValueError, match=r"class ids must be in \[0, 3\)"):
        keras.utils.to_categorical([0, 3], 3)


def test_keras_mnist_cnn_example_as_written(digits):
    """Keras's mnist_cnn.py as written (backend's image layout, a loss *function* in compile,
    Adadelta at Keras 2's learning rate of 1.0, for which the example was written), on the
    digits."""
    keras = eg.keras
    from edugraph.keras import backend as K
    from edugraph.keras.layers import Conv2D, Dense, Dropout, Flatten, MaxPooling2D
    from edugraph.keras.models import Sequential
    (x_train, y_train), (x_test, y_test) = digits
    num_classes, img_rows, img_cols = 10, 8, 8
    eg.manual_seed(0)
    K.clear_session()
    assert K.image_data_format() == 'channels_last'
    x_train = x_train.reshape(x_train.shape[0], img_rows, img_cols, 1)
    x_test = x_test.reshape(x_test.shape[0], img_rows, img_cols, 1)
    input_shape = (img_rows, img_cols, 1)
    y_train = keras.utils.to_categorical(y_train, num_classes)
    y_test = keras.utils.to_categorical(y_test, num_classes)
    model = Sequential()
    model.add(Conv2D(32, kernel_size=(3, 3), activation='relu', input_shape=input_shape))
    model.add(Conv2D(64, (3, 3), activation='relu'))
    model.add(MaxPooling2D(pool_size=(2, 2)))
    model.add(Dropout(0.25))
    model.add(Flatten())
    model.add(Dense(128, activation='relu'))
    model.add(Dropout(0.5))
    model.add(Dense(num_classes, activation='softmax'))
    model.compile(loss=keras.losses.categorical_crossentropy,
                  optimizer=keras.optimizers.Adadelta(learning_rate=1.0), metrics=['accuracy'])
    model.fit(x_train, y_train, batch_size=128, epochs=12, verbose=0,
              validation_data=(x_test, y_test))
    score = model.evaluate(x_test, y_test, verbose=0)
    assert score[1] > 0.9
    assert [layer.name for layer in model.layers[:2]] == ["conv2d", "conv2d_1"]


def test_a_loss_function_in_compile_is_averaged_over_the_batch(digits):
    """Keras's loss functions give one value per example; compile(loss=function) trains on
    their mean, exactly as the loss's name or object does. A custom loss written with the
    backend's maths works the same way."""
    (x, y), _ = digits
    x, y = x[:256].reshape(-1, 64), eg.keras.utils.to_categorical(y[:256], 10)
    histories = []
    for loss in ("categorical_crossentropy", eg.keras.losses.categorical_crossentropy,
                 eg.keras.losses.CategoricalCrossentropy()):
        eg.manual_seed(3)
        model = eg.Sequential([layers.Dense(10, activation="softmax", input_shape=(64,))])
        model.compile("sgd", loss)
        histories.append(model.fit(x, y, batch_size=64, epochs=3, verbose=0).history["loss"])
    assert histories[0] == histories[1] == histories[2]
    assert histories[0][-1] < histories[0][0]

    K = eg.keras.backend

    def rmse(y_true, y_pred):
        return K.sqrt(K.mean(K.square(y_pred - y_true), axis=-1))
    model.compile("sgd", rmse)
    y_pred = model.predict(x)
    per_example = np.sqrt(np.mean((y_pred - y) ** 2, axis=-1))
    assert model.evaluate(x, y, batch_size=256, verbose=0) == pytest.approx(
        per_example.mean(), rel=1e-5)
    assert "LossFunctionWrapper(rmse)" == repr(eg.losses.get(rmse))


def test_keras_backend_layout_names_and_maths():
    K = eg.keras.backend
    assert (K.floatx(), K.epsilon()) == ("float32", 1e-7)
    K.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match=r"channels_last .* not 'channels_first'.*transpose"):
        K.set_image_data_format("channels_first")
    K.clear_session()
    assert [layers.Dense(1).name for _ in range(2)] == ["dense", "dense_1"]
    K.clear_session()
    assert layers.Dense(1).name == "dense"
    x = eg.tensor([[1., -4.], [3., 2.]])
    np.testing.assert_allclose(K.mean(x, axis=-1).numpy(), [-1.5, 2.5])
    np.testing.assert_allclose(K.sum(x, axis=0, keepdims=True).numpy(), [[4., -2.]])
    np.testing.assert_allclose([K.max(x).item(), K.min(x).item()], [3., -4.])
    np.testing.assert_array_equal(K.argmax(x).numpy(), [0, 0])
    np.testing.assert_allclose(K.clip(x, 0., 2.).numpy(), [[1., 0.], [2., 2.]])
    np.testing.assert_allclose(K.dot(x, x).numpy(), x.numpy() @ x.numpy())


def test_fit_hands_its_callbacks_keras_params():
    """Keras's fit calls set_params({"verbose", "epochs", "steps"}) on every callback before
    on_train_begin (a progress display needs "epoch k / N")."""
    seen = []

    class Spy(eg.models.callbacks.Callback):
        def on_train_begin(self, logs=None):
            seen.append(dict(self.params))

    net = eg.Sequential([layers.Dense(1, input_shape=(3,))])
    net.compile("sgd", "mse")
    net.fit(np.ones((10, 3)), np.ones((10, 1)), batch_size=4, epochs=3, verbose=0,
            callbacks=[Spy()])
    assert seen == [{"verbose": 0, "epochs": 3, "steps": 3}]
