"""``tf.keras.utils``: what Keras examples use to prepare labels and to seed a run."""
import numpy as np


def to_categorical(y, num_classes=None, dtype="float32"):
    """Class ids as one-hot rows, a numpy array (Keras's): ``to_categorical([0, 2], 3)`` is
    ``[[1, 0, 0], [0, 0, 1]]``. A trailing axis of size 1 is dropped, as Keras does."""
    ids = np.asarray(y.numpy() if hasattr(y, "numpy") else y)
    if ids.ndim > 1 and ids.shape[-1] == 1:
        ids = ids[..., 0]
    if ids.size and (ids.dtype.kind not in "iuf" or np.any(ids != np.round(ids))):
        raise TypeError(f"to_categorical needs integer class ids, got {ids.dtype} values "
                        f"such as {ids.ravel()[:3].tolist()}.")
    ids = ids.astype(np.int64)
    num_classes = int(ids.max()) + 1 if num_classes is None and ids.size else num_classes or 0
    if ids.size and (ids.min() < 0 or ids.max() >= num_classes):
        raise ValueError(f"to_categorical: class ids must be in [0, {num_classes}), got ids "
                         f"from {ids.min()} to {ids.max()}; pass num_classes= to cover them.")
    return np.eye(num_classes, dtype=dtype)[ids]


def set_random_seed(seed):
    """Keras 3's way to make a run repeat: seeds Python's ``random``, numpy's global
    generator and edugraph's (``eg.random.set_seed``), as Keras seeds its backend's."""
    import random
    from ..ops.random import set_seed
    random.seed(seed)
    np.random.seed(seed)
    set_seed(seed)
