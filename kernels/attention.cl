/* attention.cl — o2c.Attention: y = softmax(q kᵀ · scale + mask) v, flash-style, fp32.
 *
 * Never materializes the N×S score matrix: each work-item owns RB query rows of one (batch,
 * head) and one chunk of DC output dims, walks the S keys in tiles of ATT_KT = 16 keys and keeps
 * an online softmax per row (running max m, running sum l, accumulator acc[DC]):
 *
 *     for each key tile:   s_j = scale · <q_r, k_j> + mask[r, j]   (-inf beyond the diagonal
 *                          if causal), m' = max(m, max_j s_j), corr = exp(m - m'),
 *                          l = l·corr + Σ exp(s_j - m'),  acc = acc·corr + Σ exp(s_j - m') v_j
 *     at the end:          y_r = acc / l
 *
 * Rows whose keys are all -inf give 0/0 = NaN, as the unfused Softmax does, or 0 with
 * mflags bit 1 (the masked-row guard after the Softmax: dynamo's Where(IsNaN(p), 0, p), the
 * opset-23 Attention's; bit 0: add the mask); partially masked rows never produce NaN (exp(-inf - m) = 0 for finite m, p is 0 and corr 1 while m' is -inf).
 *
 * Both products are register-tiled like a GEMM (explicit vectors are what PoCL vectorizes):
 *   scores   s[r] (one float16 per row = 16 keys) += q[r, d] · kt[d, j0 .. j0+15] for d < D:
 *            k is read transposed (kt, d-major, keys contiguous; written by att_kt below), so
 *            every vload16 of kt feeds RB broadcast FMAs;
 *   p·v      acc[r, c .. c+CW) += p[r, j] · v[j, c .. c+CW) for the tile's keys, chunk by chunk
 *            of CW output dims (CW = 16 when DC >= 16; the remainder in chunks of 8, 4, 1, e.g.
 *            D=40: 16+16+8): every vload of a v row feeds RB FMAs; acc lives in a private
 *            array, one chunk of RB vectors in registers at a time (ATT_PV).
 *   exp      one float16 exp per row and tile (the builtin: a hand-written Cody-Waite float16
 *            exp measured no faster on PoCL).
 *
 *          j0 .. j0+15                       c .. c+CW
 *   r0   [ s[0]  ]  = q[RB×D] · kt[D×16]     [ acc ]  += p[RB×16] · v[16×CW]
 *   ...  [ ...   ]                           [ ... ]
 *
 * Layout: q, v and y are read/written through element strides passed as int arguments, so the
 * head split/merge transposes of the exported graph are absorbed:
 *     q[b*qb + h*qh + n*qn + d*qd]  v[b*vb + h*vh + s*vn + d]  y[b*ob + h*oh + n*on + d*od]
 *     mask[b*mb + h*mh + n*mn + s*ms]  (0 strides broadcast)
 *     kt[b*ktb + h*kth + j0*kta + d*ktd + s%16] for the tile of keys j0 .. j0+15 (j0 = s - s%16):
 *     16 consecutive keys of one d are contiguous (one vload16). Usually kt is the scratch that
 *     att_kt writes: (((b*H + h)*SP/16 + s/16)*D + d)*16 + s%16 (SP = S rounded up to 16; keys
 *     >= S are zero: tiles of 16 keys, each a contiguous D x 16 block, read as one stream), i.e.
 *     ktb = H*D*SP, kth = D*SP, kta = D, ktd = 16. A k whose keys are already contiguous along s
 *     (kn = 1: the channels-first [B, D, S] of the ldm AttnBlock) with S % 16 == 0 and a small
 *     head (codegen/sched_attention.c) is read in place: kt = k, ktb = kb, kth = kh, kta = 1,
 *     ktd = kd (no copy, no scratch).
 * The head dim of q and y may have any stride (qd, od: channels-first [B, D, N] tensors of the
 * ldm AttnBlock have qd = od = N; q is read once per row, y written once); v's must be 1 (its
 * rows are vloaded): a v with a strided head dim is first copied densely, by att_kvt in the
 * launch that transposes k, or by att_vt when k is read in place.
 *
 * Compile-time specialization: head dim D, output chunk DC (D = NC·DC; DC < D only for heads
 * over 512 dims, which then recompute q·k once per chunk; the VAE's 512 is one chunk), rows per
 * work-item RB and widest chunk CW are macro arguments: the lowering emits one line
 *     ATT_DEFINE(attention_d40_c40_r8_w16, 40, 40, 8, 16)
 * per distinct (D, DC, RB, CW) through cg_add_source(), so loops over D have constant trip
 * counts and private arrays have exact sizes.
 * Launch: att_kt (or att_kvt; att_vt or nothing when k is read in place) with gws = {SP, D, B·H}
 * ({S, D, B·H} for att_vt), then the attention kernel with
 * gws = {ceil(N / RB), H, B·NC} and small work-groups (lws[0] <= 8: see
 * codegen/sched_attention.c).
 * This file does not depend on T (float32 only) and defines its macros once.
 */
#ifndef O2C_ATTENTION_CL
#define O2C_ATTENTION_CL

#define ATT_KT 16 /* keys per tile = the float16 width of a row of scores */

/* kt[(((b*H + h)*SP/16 + s/16)*D + d)*16 + s%16] = k[b*kb + h*kh + s*kn + d*kd] (0 for
 * s >= S). gws = {SP, D, B*H}. */
__kernel void att_kt(__global const float *restrict k, __global float *restrict kt, int S,
                     int SP, int D, int H, int kb, int kh, int kn, int kd)
{
    const int s = (int)get_global_id(0), d = (int)get_global_id(1), bh = (int)get_global_id(2);
    const int b = bh / H, h = bh % H;
    kt[((bh * (SP / 16) + s / 16) * D + d) * 16 + s % 16] =
        s < S ? k[b * kb + h * kh + s * kn + d * kd] : 0.0f;
}

/* att_kt, plus a dense copy of a v whose head dim is not contiguous (vd != 1: the channels-first
 * [B, D, S] of the ldm AttnBlock), so that the attention kernel's vloads along d stay:
 *     vt[((b*H + h)*S + s)*D + d] = v[b*vb + h*vh + s*vn + d*vd]   (s < S)
 * gws = {SP, D, B*H} (the same launch: no extra launch for the copy). */
__kernel void att_kvt(__global const float *restrict k, __global float *restrict kt,
                      __global const float *restrict v, __global float *restrict vt, int S,
                      int SP, int D, int H, int kb, int kh, int kn, int kd, int vb, int vh,
                      int vn, int vd)
{
    const int s = (int)get_global_id(0), d = (int)get_global_id(1), bh = (int)get_global_id(2);
    const int b = bh / H, h = bh % H;
    kt[((bh * (SP / 16) + s / 16) * D + d) * 16 + s % 16] =
        s < S ? k[b * kb + h * kh + s * kn + d * kd] : 0.0f;
    if (s < S) vt[(bh * S + s) * D + d] = v[b * vb + h * vh + s * vn + d * vd];
}

/* The dense copy of v of att_kvt alone (k read in place). gws = {S, D, B*H}. */
__kernel void att_vt(__global const float *restrict v, __global float *restrict vt, int S, int D,
                     int H, int vb, int vh, int vn, int vd)
{
    const int s = (int)get_global_id(0), d = (int)get_global_id(1), bh = (int)get_global_id(2);
    const int b = bh / H, h = bh % H;
    vt[(bh * S + s) * D + d] = v[b * vb + h * vh + s * vn + d * vd];
}

/* CW-wide loads/stores and types: ATT_T_<CW>, ATT_LD_<CW>(p), ATT_ST_<CW>(x, p). */
#define ATT_T_16 float16
#define ATT_T_8 float8
#define ATT_T_4 float4
#define ATT_T_1 float
#define ATT_LD_16(p) vload16(0, (p))
#define ATT_LD_8(p) vload8(0, (p))
#define ATT_LD_4(p) vload4(0, (p))
#define ATT_LD_1(p) (*(p))
#define ATT_ST_16(x, p) vstore16((x), 0, (p))
#define ATT_ST_8(x, p) vstore8((x), 0, (p))
#define ATT_ST_4(x, p) vstore4((x), 0, (p))
#define ATT_ST_1(x, p) (*(p) = (x))
#define ATT_CAT(a, b) a##b

/* Horizontal max / sum of a float16. */
static inline float att_hmax16(float16 v)
{
    const float8 a = fmax(v.lo, v.hi);
    const float4 b = fmax(a.lo, a.hi);
    const float2 c = fmax(b.lo, b.hi);
    return fmax(c.x, c.y);
}
static inline float att_hsum16(float16 v)
{
    const float8 a = v.lo + v.hi;
    const float4 b = a.lo + a.hi;
    return (b.x + b.y) + (b.z + b.w);
}

/* acc[r, c .. c+W) = acc[r, c .. c+W) * corr[r] + sum_jj p[r, jj] * v[j0 + jj, c .. c+W) for the
 * RB rows of the current tile (inside ATT_DEFINE: uses ag, corr, pp, vp, vn, j0, nk). */
#define ATT_PV(W, c, RB)                                                                            \
    do {                                                                                         \
        ATT_CAT(ATT_T_, W) a_[RB];                                                               \
        _Pragma("unroll") for (int r = 0; r < (RB); r++)                                         \
            a_[r] = ATT_CAT(ATT_LD_, W)(ag[r] + (c)) * corr[r];                                  \
        for (int jj = 0; jj < nk; jj++) {                                                        \
            const ATT_CAT(ATT_T_, W) vv_ = ATT_CAT(ATT_LD_, W)(vp + (j0 + jj) * vn + (c));       \
            _Pragma("unroll") for (int r = 0; r < (RB); r++)                                     \
                a_[r] = fma((ATT_CAT(ATT_T_, W))(pp[r][jj]), vv_, a_[r]);                        \
        }                                                                                        \
        _Pragma("unroll") for (int r = 0; r < (RB); r++)                                         \
            ATT_CAT(ATT_ST_, W)(a_[r], ag[r] + (c));                                             \
    } while (0)

/* Start columns of the remainder chunks after the CW-wide ones (compile-time constants): the 8-,
 * 4- and 1-wide parts of DC - DC / CW * CW, each taken only where that many columns are left. */
#define ATT_C8(DC, CW) ((DC) / (CW) * (CW))
#define ATT_C4(DC, CW) (ATT_C8(DC, CW) + ((DC) - ATT_C8(DC, CW) >= 8 ? 8 : 0))
#define ATT_C1(DC, CW) (ATT_C4(DC, CW) + ((DC) - ATT_C4(DC, CW) >= 4 ? 4 : 0))

#define ATT_DEFINE(NAME, D, DC, RB, CW)                                                          \
    __kernel void NAME(__global const float *restrict q, __global const float *restrict kt,     \
                       __global const float *restrict v, __global const float *restrict mask,   \
                       __global float *restrict y, int N, int S, int ktb, int kth, int kta,     \
                       int ktd, int NC, float scale,                                            \
                       int causal, int mflags, int qb, int qh, int qn, int qd, int vb, int vh, \
                       int vn, int ob, int oh, int on, int od, int mb, int mh, int mn, int ms)  \
    {                                                                                            \
        const int r0 = (int)get_global_id(0) * (RB);                                             \
        const int h = (int)get_global_id(1);                                                     \
        const int H = (int)get_global_size(1);                                                   \
        const int b = (int)get_global_id(2) / NC;                                                \
        const int c0 = ((int)get_global_id(2) % NC) * (DC);                                      \
        if (r0 >= N) return;                                                                     \
        __global const float *ktp = kt + b * ktb + h * kth;                                      \
        __global const float *vp = v + b * vb + h * vh + c0;                                     \
        __global const float *mp = mask + b * mb + h * mh;                                       \
        float qg[RB][D], ag[RB][DC], pp[RB][ATT_KT], m[RB], l[RB], corr[RB];                     \
        int row[RB];                                                                             \
        for (int r = 0; r < (RB); r++) {                                                         \
            row[r] = min(r0 + r, N - 1);                                                         \
            __global const float *qr = q + b * qb + h * qh + row[r] * qn;                        \
            for (int t = 0; t < (D); t++) qg[r][t] = qr[t * qd];                                 \
            for (int t = 0; t < (DC); t++) ag[r][t] = 0.0f;                                      \
            m[r] = -INFINITY;                                                                    \
            l[r] = 0.0f;                                                                         \
        }                                                                                        \
        const int kend = causal ? min(S, r0 + (RB)) : S;                                         \
        for (int j0 = 0; j0 < kend; j0 += ATT_KT) {                                              \
            const int nk = min(ATT_KT, kend - j0);                                               \
            float16 s[RB];                                                                       \
            _Pragma("unroll") for (int r = 0; r < (RB); r++) s[r] = (float16)(0.0f);             \
            for (int d = 0; d < (D); d++) {                                                      \
                const float16 kv = vload16(0, ktp + (j0 * kta + d * ktd));                       \
                _Pragma("unroll") for (int r = 0; r < (RB); r++)                                 \
                    s[r] = fma((float16)(qg[r][d]), kv, s[r]);                                   \
            }                                                                                    \
            _Pragma("unroll") for (int r = 0; r < (RB); r++) s[r] *= scale;                      \
            if ((mflags & 1) || causal || nk < ATT_KT) {                                             \
                _Pragma("unroll") for (int r = 0; r < (RB); r++) vstore16(s[r], 0, pp[r]);       \
                for (int r = 0; r < (RB); r++)                                                   \
                    for (int jj = 0; jj < ATT_KT; jj++) {                                        \
                        const int j = j0 + jj;                                                   \
                        float sc = pp[r][jj];                                                    \
                        if (jj >= nk) sc = -INFINITY;                                            \
                        else if (mflags & 1) sc += mp[row[r] * mn + j * ms];                       \
                        if (causal && j > row[r]) sc = -INFINITY;                                \
                        pp[r][jj] = sc;                                                          \
                    }                                                                            \
                _Pragma("unroll") for (int r = 0; r < (RB); r++) s[r] = vload16(0, pp[r]);       \
            }                                                                                    \
            _Pragma("unroll") for (int r = 0; r < (RB); r++) {                                   \
                const float mn_ = fmax(m[r], att_hmax16(s[r]));                                  \
                corr[r] = mn_ == -INFINITY ? 1.0f : exp(m[r] - mn_);                             \
                /* p = exp(s - m) for the whole tile (vector exp); 0 while m is -inf */          \
                const float16 p16 = mn_ == -INFINITY ? (float16)(0.0f) : exp(s[r] - mn_);        \
                l[r] = l[r] * corr[r] + att_hsum16(p16);                                         \
                m[r] = mn_;                                                                      \
                vstore16(p16, 0, pp[r]);                                                         \
            }                                                                                    \
            /* chunks of CW, then the remainder (< CW) in one 8, one 4 and single columns;   \
             * every column exactly once (CW 4 or 1 used to repeat the first chunk) */        \
            for (int c = 0; c + (CW) <= (DC); c += (CW))                                         \
                ATT_PV(CW, c, RB);                                                               \
            if ((DC) - ATT_C8(DC, CW) >= 8) ATT_PV(8, ATT_C8(DC, CW), RB);                       \
            if ((DC) - ATT_C4(DC, CW) >= 4) ATT_PV(4, ATT_C4(DC, CW), RB);                       \
            for (int c = ATT_C1(DC, CW); c < (DC); c++) ATT_PV(1, c, RB);                        \
        }                                                                                        \
        for (int r = 0; r < (RB); r++) {                                                         \
            if (r0 + r >= N) break;                                                              \
            __global float *yr = y + b * ob + h * oh + (r0 + r) * on + c0;                       \
            const float inv = 1.0f / l[r];                                                       \
            const bool zr = (mflags & 2) && !(l[r] > 0.0f); /* masked-row guard */               \
            for (int c = 0; c < (DC); c++) yr[c * od] = zr ? 0.0f : ag[r][c] * inv;              \
        }                                                                                        \
    }

#endif /* O2C_ATTENTION_CL */
