"""The 8×8 handwritten digits that ship inside scikit-learn (1797 images, UCI's optdigits test
set), split into train and test sets like ``keras.datasets.mnist.load_data()``."""
import numpy as np


def load_digits(test_size=0.2, seed=0):
    """``(x_train, y_train), (x_test, y_test)``: images (n, 8, 8) float32 in [0, 1], labels
    int64 0–9. The split is stratified (each digit in the same proportion) and fixed by ``seed``.
    """
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError as e:
        raise ImportError("eg.datasets.load_digits reads the copy bundled with scikit-learn: "
                          "pip install scikit-learn (or edugraph[lab]).") from e
    data = sklearn_digits()
    images = (data.images / 16.0).astype(np.float32)        # pixel values are 0..16
    labels = data.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    test = np.zeros(len(labels), dtype=bool)
    for digit in range(10):
        members = rng.permutation(np.flatnonzero(labels == digit))
        test[members[:int(round(len(members) * test_size))]] = True
    train_idx, test_idx = rng.permutation(np.flatnonzero(~test)), np.flatnonzero(test)
    return (images[train_idx], labels[train_idx]), (images[test_idx], labels[test_idx])
