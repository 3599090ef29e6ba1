/* prelude.cl — emitted once at the top of every generated model's OpenCL program.
 *
 * Each kernel family file (kernels/<family>.cl) is then included once per element type it is
 * used with, between "#define T <ctype>" / "#define TS <suffix>" and their #undef, so kernel
 * and helper names must go through KN(): KN(add) -> add_f32 when TS is f32.
 * Suffixes: f32 float, f64 double, f16 half, i8 char, u8 uchar, i16 short, u16 ushort,
 * i32 int, u32 uint, i64 long, u64 ulong, b (bool, stored as uchar 0/1).
 * Index convention: every tensor is dense, row-major (C order); sizes and strides are passed as
 * int kernel arguments (elements, not bytes) unless a family says otherwise.
 */
#define KN3(a, b) a##_##b
#define KN2(a, b) KN3(a, b)
#define KN(name) KN2(name, TS)
#ifndef O2C_MAX_RANK
#define O2C_MAX_RANK 6
#endif
