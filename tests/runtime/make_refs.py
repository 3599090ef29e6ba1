#!/usr/bin/env python3
"""make_refs.py — regenerates the small reference files under tests/runtime/data/ (committed).

What: (1) .npy copies (numpy.save) of a curated list of ONNX backend-test TensorProto files, so the
runtime's .pb reader is checked against onnx.numpy_helper; (2) TensorProto files that use the
typed fields (float_data, int32_data, int64_data, double_data, uint64_data) instead of raw_data,
with their .npy; (3) numpy-written .npy files (every dtype, odd shapes, rank 0, empty, format
v2.0) that the runtime's reader must parse and its writer must reproduce byte for byte.
Run: python3 tests/runtime/make_refs.py  (needs numpy + onnx; not run by the build).
"""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
NODE = "/usr/include/onnx/backend/test/data/node"
os.makedirs(OUT, exist_ok=True)

PB_CASES = [
    "test_abs/test_data_set_0/input_0.pb",
    "test_adagrad/test_data_set_0/input_0.pb",
    "test_adagrad/test_data_set_0/input_1.pb",
    "test_bitshift_left_uint8/test_data_set_0/input_0.pb",
    "test_bitshift_left_uint16/test_data_set_0/input_0.pb",
    "test_bitshift_left_uint32/test_data_set_0/input_0.pb",
    "test_bitshift_left_uint64/test_data_set_0/input_0.pb",
    "test_clip_default_int8_max/test_data_set_0/input_1.pb",
    "test_max_int16/test_data_set_0/input_0.pb",
    "test_constantofshape_int_shape_zero/test_data_set_0/output_0.pb",
    "test_blackmanwindow/test_data_set_0/input_0.pb",
    "test_triu_zero/test_data_set_0/input_0.pb",
    "test_training_dropout/test_data_set_0/input_2.pb",
    "test_castlike_DOUBLE_to_FLOAT16/test_data_set_0/input_1.pb",
    "test_einsum_inner_prod/test_data_set_0/output_0.pb",
    "test_and2d/test_data_set_0/input_0.pb",
    "test_conv_with_strides_padding/test_data_set_0/output_0.pb",
]

with open(os.path.join(OUT, "pb_cases.txt"), "w") as lst:
    for rel in PB_CASES:
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(NODE, rel), "rb").read())
        a = numpy_helper.to_array(t)
        name = rel.replace("/test_data_set_0/", "__").replace(".pb", ".npy")
        np.save(os.path.join(OUT, "pb_" + name), a)
        lst.write(f"{rel} pb_{name}\n")

# TensorProto with typed fields (no raw_data).
rng = np.random.default_rng(7)
typed = {
    "f32": (TensorProto.FLOAT, rng.standard_normal((2, 3)).astype(np.float32)),
    "f64": (TensorProto.DOUBLE, rng.standard_normal((3,)).astype(np.float64)),
    "f16": (TensorProto.FLOAT16, rng.standard_normal((2, 2)).astype(np.float16)),
    "i8": (TensorProto.INT8, np.array([-128, -1, 0, 127], np.int8)),
    "u8": (TensorProto.UINT8, np.array([[0, 255], [7, 9]], np.uint8)),
    "i16": (TensorProto.INT16, np.array([-32768, 5, 32767], np.int16)),
    "u16": (TensorProto.UINT16, np.array([65535, 1], np.uint16)),
    "i32": (TensorProto.INT32, np.array([[-2147483648, 2147483647, 3]], np.int32)),
    "i64": (TensorProto.INT64, np.array([-(2**63), 2**63 - 1, 42], np.int64)),
    "u32": (TensorProto.UINT32, np.array([4294967295, 0], np.uint32)),
    "u64": (TensorProto.UINT64, np.array([2**64 - 1, 3], np.uint64)),
    "bool": (TensorProto.BOOL, np.array([True, False, True], np.bool_)),
    "scalar_f32": (TensorProto.FLOAT, np.array(2.5, np.float32)),
}
for key, (dt, a) in typed.items():
    t = helper.make_tensor("t_" + key, dt, a.shape, a.flatten().tolist(), raw=False)
    assert not t.raw_data
    assert np.array_equal(numpy_helper.to_array(t), a)
    open(os.path.join(OUT, f"typed_{key}.pb"), "wb").write(t.SerializeToString())
    np.save(os.path.join(OUT, f"typed_{key}.npy"), a)

# numpy-written .npy files: reader input + writer byte-exact reference.
npy = {
    "f32_2x3": np.arange(6, dtype=np.float32).reshape(2, 3) / 3,
    "f64_5": np.linspace(-1, 1, 5),
    "f16_3x1x2": (np.arange(6, dtype=np.float16) - 2).reshape(3, 1, 2),
    "i8_7": np.arange(-3, 4, dtype=np.int8),
    "i16_2x2": np.array([[-300, 2], [3, 32767]], np.int16),
    "i32_1x1x1x3": np.array([-1, 0, 1], np.int32).reshape(1, 1, 1, 3),
    "i64_scalar": np.array(-123456789012, np.int64),
    "u8_4": np.array([0, 1, 128, 255], np.uint8),
    "u16_2": np.array([0, 65535], np.uint16),
    "u32_2": np.array([7, 4294967295], np.uint32),
    "u64_1": np.array([18446744073709551615], np.uint64),
    "bool_2x2": np.array([[True, False], [False, True]]),
    "f32_empty_0x4": np.zeros((0, 4), np.float32),
    "f32_rank8": np.arange(2 * 3, dtype=np.float32).reshape(1, 2, 1, 3, 1, 1, 1, 1),
}
for key, a in npy.items():
    np.save(os.path.join(OUT, f"np_{key}.npy"), a)
# a v2.0 file (numpy writes 2.0 only for huge headers, so force it)
with open(os.path.join(OUT, "np_v2_f32_3.npy"), "wb") as f:
    np.lib.format.write_array(f, np.array([1.5, -2.0, 3.25], np.float32), version=(2, 0))
print("wrote", len(os.listdir(OUT)), "files to", OUT)
