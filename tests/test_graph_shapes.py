"""Static shape inference in graphs: TF1's shapes before anything runs, clear errors early."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import ShapeError


def test_reshape_infers_minus_one_when_the_size_is_known_and_leaves_it_unknown_otherwise():
    with eg.Graph().as_default():
        known = eg.placeholder(eg.float32, (3, 4, 2), name="known")
        batch = eg.placeholder(eg.float32, (None, 4, 2), name="batch")
        assert eg.reshape(known, (-1, 8)).shape == (3, 8)
        assert eg.reshape(batch, (-1, 8)).shape.as_list() == [None, 8]
        fixed_rows = eg.reshape(batch, (3, -1))
        assert fixed_rows.shape.as_list() == [3, None]
        with eg.Session() as sess:
            out = sess.run(fixed_rows, {batch: np.arange(24.0).reshape(3, 4, 2)})
        np.testing.assert_array_equal(out, np.arange(24.0).reshape(3, 8))


@pytest.mark.parametrize("target", [(5, -1), (5, 3)])
def test_reshape_to_an_impossible_shape_fails_when_the_graph_is_built(target):
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (3, 4, 2), name="x")
        with pytest.raises(ShapeError, match=r"\(3, 4, 2\) \(24 elements\) into \(5, "):
            eg.reshape(x, target)


def test_reshape_with_an_unknown_batch_reports_the_run_time_shape():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (None, 4, 2), name="x")
        y = eg.reshape(x, (5, -1))
        with eg.Session() as sess:
            with pytest.raises(eg.errors.InvalidArgumentError,
                               match=r"shape \(3, 4, 2\) \(24 elements\) into \(5, -1\)"):
                sess.run(y, {x: np.ones((3, 4, 2))})
