"""make_models.py — writes the small hand-made bad-input models used by tests/bad_input.

Run once (needs the `onnx` package); the outputs are committed, so tests need no Python.
"""
import os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    onnx.save(model, os.path.join(here, name))


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
# unknown op in the default domain
save(helper.make_model(helper.make_graph([helper.make_node("FancyOp", ["x"], ["y"], name="fancy0")],
                                         "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)]),
     "unknown_op.onnx")
# op from another domain
save(helper.make_model(helper.make_graph([helper.make_node("FastGelu", ["x"], ["y"], name="fg0",
                                                           domain="com.microsoft")], "g", [x], [y]),
                       opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]),
     "other_domain.onnx")
# Conv whose group does not divide the channels
xc = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5])
yc = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
w = numpy_helper.from_array(np.ones((3, 4, 3, 3), np.float32), "w")
save(helper.make_model(helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", group=3)],
                                         "g", [xc], [yc], [w]), opset_imports=[helper.make_opsetid("", 17)]),
     "conv_bad_group.onnx")
# Reshape to an impossible size
s = numpy_helper.from_array(np.array([4, 4], np.int64), "s")
save(helper.make_model(helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape0")],
                                         "g", [x], [yc], [s]), opset_imports=[helper.make_opsetid("", 17)]),
     "reshape_bad.onnx")
# symbolic dim that must be bound
xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])
b = numpy_helper.from_array(np.array([0.5, -1.0, 2.0], np.float32), "b")
save(helper.make_model(helper.make_graph([helper.make_node("Add", ["x", "b"], ["t"], name="add0"),
                                          helper.make_node("Relu", ["t"], ["y"], name="relu0")],
                                         "g", [xs], [ys], [b]), opset_imports=[helper.make_opsetid("", 17)]),
     "symbolic.onnx")
np.save(os.path.join(here, "x_2x3.npy"), np.arange(6, dtype=np.float32).reshape(2, 3))
np.save(os.path.join(here, "x_3x2.npy"), np.arange(6, dtype=np.float32).reshape(3, 2))
np.save(os.path.join(here, "x_2x3_f64.npy"), np.arange(6, dtype=np.float64).reshape(2, 3))
# a TensorProto input holding its values twice: raw_data and float_data (onnx.proto: one of them)
both = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "x")
both.float_data.extend([1, 2, 3, 4, 5, 6])
with open(os.path.join(here, "x_both.pb"), "wb") as f:
    f.write(both.SerializeToString())
