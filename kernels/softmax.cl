/* softmax.cl — Softmax / LogSoftmax / Hardmax along one axis (ONNX -13, and the coerced-2D form
 * of opset < 13, which the lowering expresses as the same [outer, R, inner] view).
 *
 * Layout: X and Y dense, viewed as [outer, R, inner]; a "row" is the R elements
 * x[o, 0..R-1, i] (stride inner). Rows are numbered row = o*inner + i.
 * mode 0 softmax: y = exp(x - max) / sum(exp(x - max))      (max subtracted for stability)
 * mode 1 log-softmax: y = (x - max) - log(sum(exp(x - max)))
 * mode 2 hardmax: y = 1 at the first index of the row maximum, 0 elsewhere
 * Statistics in SMT: double for T = double (f64, cl_khr_fp64), float otherwise. NaN in a row
 * gives NaN (softmax/logsoftmax).
 *
 * softmax_wg:  one work-group of exactly SM_LWS work-items per row (gws[0] = rows*SM_LWS,
 *              lws[0] = SM_LWS), strided loads + __local tree reductions. For long rows.
 *              Modes 0 and 1 only; hardmax_wg (same launch shape, no mode argument) is mode 2
 *              (kept separate: PoCL 3.1 crashed on the barrier-containing mode branch when
 *              some work-items had no elements).
 * softmax_seq: one work-item per row (gws[0] = rows), sequential loops. For short rows.
 */
#ifndef SM_LWS
#define SM_LWS 128
#endif

/* SMT: statistics type, per instantiation (#undef at the end of the file). The type test is on
 * the suffix (T is a macro for a type name, which the preprocessor cannot compare). */
#define O2C_SM_ID_f64 1
#define O2C_SM_CAT3(a, b) a##b
#define O2C_SM_CAT2(a, b) O2C_SM_CAT3(a, b)
#if O2C_SM_CAT2(O2C_SM_ID_, TS) == 1
#define SMT double
#else
#define SMT float
#endif
/* Tree reductions over a work-group of SM_LWS items; every item gets the result. */
static SMT KN(sm_wg_max)(__local SMT *s, SMT v)
{
    const int lid = (int)get_local_id(0);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = SM_LWS / 2; off > 0; off >>= 1) {
        if (lid < off) {
            const SMT o = s[lid + off];
            if (o > s[lid] || isnan(o)) s[lid] = isnan(s[lid]) ? s[lid] : o;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const SMT r = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
static SMT KN(sm_wg_sum)(__local SMT *s, SMT v)
{
    const int lid = (int)get_local_id(0);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = SM_LWS / 2; off > 0; off >>= 1) {
        if (lid < off) s[lid] += s[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const SMT r = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
/* Index of the first maximum: ties go to the smaller index. */
static int KN(sm_wg_argmax)(__local SMT *sv, __local int *si, SMT v, int idx)
{
    const int lid = (int)get_local_id(0);
    sv[lid] = v;
    si[lid] = idx;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = SM_LWS / 2; off > 0; off >>= 1) {
        if (lid < off) {
            const SMT ov = sv[lid + off];
            const int oi = si[lid + off];
            if (oi >= 0 && (si[lid] < 0 || ov > sv[lid] || (ov == sv[lid] && oi < si[lid]))) {
                sv[lid] = ov;
                si[lid] = oi;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int r = si[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

__kernel void KN(softmax_wg)(__global const T *X, __global T *Y, int R, int inner, int mode)
{
    __local SMT sv[SM_LWS];
    const int row = (int)get_group_id(0);
    const int lid = (int)get_local_id(0);
    const int base = (row / inner) * R * inner + row % inner;
    const __global T *x = X + base;
    __global T *y = Y + base;
    SMT m = -INFINITY;
    for (int j = lid; j < R; j += SM_LWS) {
        const SMT v = (SMT)x[j * inner];
        if (v > m || isnan(v)) m = isnan(m) ? m : v;
    }
    m = KN(sm_wg_max)(sv, m);
    SMT s = 0;
    for (int j = lid; j < R; j += SM_LWS) s += exp((SMT)x[j * inner] - m);
    s = KN(sm_wg_sum)(sv, s);
    if (mode == 0) {
        const SMT inv = (SMT)1 / s;
        for (int j = lid; j < R; j += SM_LWS) y[j * inner] = (T)(exp((SMT)x[j * inner] - m) * inv);
    } else {
        const SMT ls = log(s);
        for (int j = lid; j < R; j += SM_LWS) y[j * inner] = (T)(((SMT)x[j * inner] - m) - ls);
    }
}

__kernel void KN(hardmax_wg)(__global const T *X, __global T *Y, int R, int inner)
{
    __local SMT sv[SM_LWS];
    __local int si[SM_LWS];
    const int row = (int)get_group_id(0);
    const int lid = (int)get_local_id(0);
    const int base = (row / inner) * R * inner + row % inner;
    const __global T *x = X + base;
    __global T *y = Y + base;
    SMT best = 0;
    int bi = -1;
    for (int j = lid; j < R; j += SM_LWS) {
        const SMT v = (SMT)x[j * inner];
        if (bi < 0 || v > best) {
            best = v;
            bi = j;
        }
    }
    const int am = KN(sm_wg_argmax)(sv, si, best, bi);
    for (int j = lid; j < R; j += SM_LWS) y[j * inner] = (T)(j == am ? 1 : 0);
}

__kernel void KN(softmax_seq)(__global const T *X, __global T *Y, int R, int inner, int mode,
                              int rows)
{
    const int row = (int)get_global_id(0);
    if (row >= rows) return;
    const int base = (row / inner) * R * inner + row % inner;
    const __global T *x = X + base;
    __global T *y = Y + base;
    if (mode == 2) {
        SMT best = (SMT)x[0];
        int bi = 0;
        for (int j = 1; j < R; j++) {
            const SMT v = (SMT)x[j * inner];
            if (v > best) {
                best = v;
                bi = j;
            }
        }
        for (int j = 0; j < R; j++) y[j * inner] = (T)(j == bi ? 1 : 0);
        return;
    }
    SMT m = -INFINITY;
    for (int j = 0; j < R; j++) {
        const SMT v = (SMT)x[j * inner];
        if (v > m || isnan(v)) m = isnan(m) ? m : v;
    }
    SMT s = 0;
    for (int j = 0; j < R; j++) s += exp((SMT)x[j * inner] - m);
    if (mode == 0) {
        const SMT inv = (SMT)1 / s;
        for (int j = 0; j < R; j++) y[j * inner] = (T)(exp((SMT)x[j * inner] - m) * inv);
    } else {
        const SMT ls = log(s);
        for (int j = 0; j < R; j++) y[j * inner] = (T)(((SMT)x[j * inner] - m) - ls);
    }
}
#undef SMT
