"""``graph.as_graph_def()``: a graph as TF's ``GraphDef`` message, what TensorBoard's graph
dashboard draws (``eg.summary.FileWriter(logdir, graph)`` writes it into an event file).

A GraphDef is a list of ``NodeDef``s, one per operation: its name (name scopes are the parts
before a ``/``, which TensorBoard draws as boxes to open), its op type, its inputs by name
(``"x"`` is output 0 of node x, ``"x:1"`` its output 1, ``"^x"`` a control input), its device,
and attributes: the dtype, the shapes of its outputs (the edge labels), a constant's value,
the op's own settings (``axis``, ``transpose_b``...). The message types are TensorFlow's; the
``tensorboard`` package ships them (``pip install 'edugraph[tensorboard]'``).
"""
import importlib

import numpy as np

from .shapes import TensorShape

_DATA_TYPES = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE",
               "int8": "DT_INT8", "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64",
               "uint8": "DT_UINT8", "bool": "DT_BOOL"}


def proto_module(name):
    """``tensorboard.compat.proto.<name>`` (TF's message types, as TensorBoard ships them)."""
    try:
        return importlib.import_module(f"tensorboard.compat.proto.{name}")
    except ImportError:
        raise ImportError("TensorBoard's file formats come with the tensorboard package, which "
                          "is not installed: pip install 'edugraph[tensorboard]' (or pip "
                          "install tensorboard).") from None


def as_graph_def(graph):
    """``graph``'s operations as a ``GraphDef`` (in creation order, a topological order)."""
    graph_def = proto_module("graph_pb2").GraphDef()
    for op in graph.get_operations():
        node = graph_def.node.add(name=op.name, op=op.type, device=op.device)
        node.input.extend([_input_name(t) for t in op.inputs] +
                          ["^" + c.name for c in op.control_inputs])
        if op.outputs:              # TF calls a source's dtype "dtype", an op's input type "T"
            _set(node.attr["T" if op.inputs else "dtype"], op.outputs[0].dtype)
            node.attr["_output_shapes"].list.shape.extend(_shape(t.shape) for t in op.outputs)
        if op.type == "Const":      # (its attrs show a big value as text: write the array)
            _set(node.attr["value"], op.eg_op.value)
        for key, value in op.attrs.items():
            if key not in ("type_name", "dtype", "value"):
                _set(node.attr[key], value)
        for key in [k for k, v in node.attr.items() if v.WhichOneof("value") is None]:
            del node.attr[key]      # a setting with no AttrValue (None, a function...)
    return graph_def


def _input_name(tensor):
    return tensor.op.name if tensor.value_index == 0 else tensor.name


def _set(attr, value):
    """``value`` into the AttrValue ``attr``, where it has a TF form."""
    if isinstance(value, np.dtype):
        attr.type = _data_type(value)
    elif isinstance(value, TensorShape):
        attr.shape.CopyFrom(_shape(value))
    elif isinstance(value, np.ndarray) and value.dtype.name in _DATA_TYPES:
        attr.tensor.CopyFrom(_tensor(value))
    elif isinstance(value, (bool, np.bool_)):
        attr.b = bool(value)
    elif isinstance(value, (int, np.integer)):
        attr.i = int(value)
    elif isinstance(value, (float, np.floating)):
        attr.f = float(value)
    elif isinstance(value, str):
        attr.s = value.encode()
    elif isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        attr.list.i.extend(value)


def _data_type(dtype):
    """TF's DataType enum for a numpy dtype (text and other objects: DT_STRING)."""
    name = _DATA_TYPES.get(np.dtype(dtype).name, "DT_STRING")
    return proto_module("types_pb2").DataType.Value(name)


def _shape(shape):
    """A TensorShapeProto: -1 for an unknown size, ``unknown_rank`` for an unknown rank."""
    proto = proto_module("tensor_shape_pb2").TensorShapeProto()
    if not shape.rank_known:
        proto.unknown_rank = True
    else:
        proto.dim.extend(proto.Dim(size=-1 if d is None else d) for d in shape)
    return proto


def _tensor(array):
    """A constant's value as a TensorProto: dtype, shape and the raw little-endian bytes."""
    return proto_module("tensor_pb2").TensorProto(
        dtype=_data_type(array.dtype), tensor_shape=_shape(TensorShape(array.shape)),
        tensor_content=np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tobytes())
