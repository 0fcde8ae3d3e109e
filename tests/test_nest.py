"""Nested structures: the one mechanism datasets, models and traced functions map over."""
from collections import namedtuple

from edugraph.nest import flatten, map_structure

Pair = namedtuple("Pair", "x y")


def test_map_structure_keeps_lists_tuples_namedtuples_and_dicts():
    value = {"a": [1, (2, 3)], "b": Pair(4, {"c": 5})}
    doubled = map_structure(lambda v: 2 * v, value)
    assert doubled == {"a": [2, (4, 6)], "b": Pair(8, {"c": 10})}
    assert type(doubled["b"]) is Pair and type(doubled["a"][1]) is tuple


def test_flatten_is_depth_first_in_order():
    assert flatten({"a": [1, (2, 3)], "b": Pair(4, {"c": 5})}) == [1, 2, 3, 4, 5]
    assert flatten(7) == [7] and flatten([]) == []
