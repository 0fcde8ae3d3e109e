"""Generated datasets and the digits loader: shapes, determinism and real structure."""
import numpy as np

import edugraph as eg
from edugraph import datasets


def test_toy_sets_are_deterministic_and_shaped():
    for make in (datasets.make_spirals, datasets.make_moons, datasets.make_blobs):
        x, y = make(seed=1)
        x2, y2 = make(seed=1)
        np.testing.assert_array_equal(x, x2)
        assert x.dtype == np.float32 and y.dtype == np.int64 and len(x) == len(y)
        assert not np.array_equal(x, make(seed=2)[0])
    x, y = datasets.make_spirals(301, n_classes=3)
    assert x.shape == (301, 2) and np.bincount(y).tolist() == [101, 100, 100]
    assert np.abs(x).max() <= 1.0 + 1e-6


def test_blobs_cluster_around_their_centres():
    centres = [[0, 0], [10, 10]]
    x, y = datasets.make_blobs(400, centers=centres, cluster_std=0.5)
    for k, c in enumerate(centres):
        np.testing.assert_allclose(x[y == k].mean(0), c, atol=0.15)


def test_regression_data_recovers_its_coefficients():
    x, y, (w, b) = datasets.make_regression(500, 3, noise=0.01)
    design = np.c_[x, np.ones(len(x))]
    fit = np.linalg.lstsq(design, y[:, 0], rcond=None)[0]
    np.testing.assert_allclose(fit, np.r_[w, b], atol=0.01)
    x, y = datasets.random_regression()              # the slides' N, D = 64, 1000
    assert x.shape == y.shape == (64, 1000)


def test_digits_split_is_stratified_and_disjoint():
    (x_train, y_train), (x_test, y_test) = datasets.load_digits(test_size=0.25)
    assert x_train.shape[1:] == (8, 8) and len(x_train) + len(x_test) == 1797
    assert 0 <= x_train.min() and x_train.max() <= 1
    test_share = np.bincount(y_test) / (np.bincount(y_test) + np.bincount(y_train))
    np.testing.assert_allclose(test_share, 0.25, atol=0.01)
    train_rows = {r.tobytes() for r in x_train}
    assert sum(r.tobytes() in train_rows for r in x_test) < 5   # only true duplicate images
    again = datasets.load_digits(test_size=0.25)
    np.testing.assert_array_equal(again[0][1], y_train)


def test_corpus_states_true_facts_and_three_verb_tenses():
    sentences = datasets.generate_corpus(3000, seed=0)
    assert len(sentences) == 3000 and sentences == datasets.generate_corpus(3000, seed=0)
    capitals = dict((c[0], c[1]) for c in datasets.COUNTRIES)
    for s in sentences:
        words = s.split()
        if "capital" in words and words[1:4] == ["is", "the", "capital"]:
            assert capitals[words[-1]] == words[0]
    text = " ".join(sentences)
    assert "yesterday" in text and " went " in text and " going " in text
    vocab = datasets.Vocabulary(sentences)
    assert "paris" in vocab and vocab.decode(vocab.encode("paris is in france")) == \
        "paris is in france"
    assert vocab.counts[0] == vocab.counts.max()
    analogies = datasets.capital_analogies()
    n = len(datasets.COUNTRIES)
    assert len(analogies) == n * (n - 1)


def test_skipgram_pairs():
    centers, contexts = datasets.skipgram_pairs([[0, 1, 2]], window=1)
    assert sorted(zip(centers.tolist(), contexts.tolist())) == [(0, 1), (1, 0), (1, 2), (2, 1)]


def test_digits_feed_a_dataset():
    (x, y), _ = datasets.load_digits()
    batch_x, batch_y = next(iter(eg.data.Dataset.from_tensor_slices((x, y)).batch(16)))
    assert batch_x.shape == (16, 8, 8) and batch_y.shape == (16,)
