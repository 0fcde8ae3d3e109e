"""edugraph.utils.printing.rounded: significant digits (or decimals), never a "-0"."""
import numpy as np

import edugraph as eg
from edugraph.utils.printing import rounded


def test_numbers_keep_significant_digits_as_python_floats():
    assert rounded(2 / 3) == 0.6667 and type(rounded(2 / 3)) is float
    assert rounded(np.float32(6.71712)) == 6.717
    assert rounded([37.9137, -0.00001234, 1234567.0], digits=3) == [37.9, -1.23e-05, 1230000.0]


def test_arrays_and_tensors_come_back_as_host_arrays():
    got = rounded(eg.tensor([[1.23456, -2.0]], device="sim:0"))
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_array_equal(got, [[1.235, -2.0]])


def test_no_negative_zero_is_ever_printed():
    assert str(rounded(-0.0)) == "0.0"
    assert str(rounded(np.array([-1e-17, 0.5]), decimals=4)) == "[0.  0.5]"
    assert str(rounded(-1e-17, decimals=3)) == "0.0"
    assert str(rounded(-1e-17)) == "-1e-17"         # significant digits keep small numbers


def test_nan_and_inf_pass_unchanged():
    assert np.isnan(rounded(float("nan"))) and rounded(-np.inf) == -np.inf
