"""Hypothesis strategies: shapes (including broadcast-compatible pairs) and float64 values.

Values are drawn away from the kinks where an op has no derivative (0.1 from 0 for relu/abs,
distinct values for max/min) so central differences and analytic gradients can agree.
"""
import numpy as np
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.extra import numpy as hnp

# Few, small examples per test: every op is checked, and the suite stays fast. The ``device``
# fixture only names a device, so reusing it across examples is safe.
checks = settings(max_examples=8, deadline=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture])


def shapes(min_dims=0, max_dims=3, max_side=4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)


def broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4):
    """Tuples of shapes that broadcast together, e.g. ((3, 1), (2, 1, 4))."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims, max_side=max_side
    ).map(lambda drawn: drawn.input_shapes)


def arrays(shape, low=-2.0, high=2.0, avoid=()):
    """float64 arrays of ``shape`` with values in [low, high], at least 0.1 from each ``avoid``
    point (the kinks of relu, abs, clip... where there is no derivative)."""
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False)
    if avoid:
        elements = elements.filter(lambda v: all(abs(v - k) >= 0.1 for k in avoid))
    return hnp.arrays(np.float64, shape, elements=elements)


def positive_arrays(shape, low=0.2, high=3.0):
    return arrays(shape, low, high)


@st.composite
def distinct_arrays(draw, shape):
    """float64 arrays whose values are all different, at least 0.1 apart (no ties for max)."""
    size = int(np.prod(shape))
    order = draw(st.permutations(range(size)))
    offset = draw(st.floats(-1, 1))
    return (np.array(order, dtype=np.float64) * 0.25 + offset).reshape(shape)


@st.composite
def shape_and_axis(draw, min_dims=1, max_dims=3):
    """A shape and an axis argument for reductions: None, one axis (maybe negative) or a tuple."""
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims))
    ndim = len(shape)
    axis = draw(st.one_of(
        st.none(),
        st.integers(-ndim, ndim - 1),
        st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(tuple)))
    return shape, axis
