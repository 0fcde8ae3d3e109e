"""Static mode (TF1): Graph, placeholder, Session, gradients, control flow, traced functions."""
from .core import (Graph, Operation, SymbolicTensor, constant, control_dependencies,
                   convert_to_tensor,
                   disable_eager_execution, enable_eager_execution, executing_eagerly,
                   get_default_graph, group, name_scope, no_op, placeholder,
                   placeholder_with_default, reset_default_graph)
from .gradients import gradients
from .function import ConcreteFunction, Function, TensorSpec, function
from .control_flow import cond, while_loop
from .tensor_array import TensorArray
from .python_calls import init_scope, py_function
from .session import ConfigProto, InteractiveSession, Session
from .shapes import TensorShape
from .variables import (GraphKeys, add_to_collection, assign, assign_add, assign_sub,
                        get_collection, global_variables, global_variables_initializer,
                        initialize_all_variables, trainable_variables, variables_initializer)

__all__ = ["Graph", "Operation", "SymbolicTensor", "TensorShape", "constant",
           "control_dependencies", "disable_eager_execution", "enable_eager_execution",
           "executing_eagerly", "get_default_graph", "group", "name_scope", "no_op",
           "placeholder", "placeholder_with_default", "reset_default_graph", "gradients", "ConfigProto",
           "InteractiveSession", "Session", "global_variables", "global_variables_initializer",
           "initialize_all_variables", "trainable_variables", "variables_initializer",
           "function", "Function", "ConcreteFunction", "TensorSpec", "cond", "while_loop",
           "TensorArray", "convert_to_tensor", "init_scope", "py_function",
           "assign", "assign_add", "assign_sub", "GraphKeys", "get_collection",
           "add_to_collection"]
