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
/* Element-type ids: O2C_TID is the id of the current instance's T (from TS); O2C_T_FLOAT is true
 * for f32/f64/f16. Families use them to select per-type code with #if. */
#ifndef O2C_KA_TYPEIDS
#define O2C_KA_TYPEIDS
#define O2C_ID_f32 1
#define O2C_ID_f64 2
#define O2C_ID_f16 3
#define O2C_ID_i8 4
#define O2C_ID_u8 5
#define O2C_ID_i16 6
#define O2C_ID_u16 7
#define O2C_ID_i32 8
#define O2C_ID_u32 9
#define O2C_ID_i64 10
#define O2C_ID_u64 11
#define O2C_ID_b 12
#define O2C_TID KN2(O2C_ID, TS)
#define O2C_T_FLOAT (O2C_TID <= 3)
#endif
