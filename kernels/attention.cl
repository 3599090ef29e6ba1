/* attention.cl — o2c.Attention: y = softmax(q kᵀ · scale + mask) v, flash-style, fp32.
 *
 * Never materializes the N×S score matrix: each work-item owns RB query rows of one (batch,
 * head) and one chunk of DC output dims, walks the S keys in tiles of ATT_KT keys and keeps an
 * online softmax per row (running max m, running sum l, accumulator acc[DC]):
 *
 *     for each key tile:   s_j = scale · <q_r, k_j> + mask[r, j]   (-inf beyond the diagonal
 *                          if causal), m' = max(m, max_j s_j), corr = exp(m - m'),
 *                          l = l·corr + Σ exp(s_j - m'),  acc = acc·corr + Σ exp(s_j - m') v_j
 *     at the end:          y_r = acc / l
 *
 * Rows whose keys are all -inf give 0/0 = NaN, as the unfused Softmax does; partially masked
 * rows never produce NaN (exp(-inf - m) = 0 for finite m, p is 0 and corr 1 while m' is -inf).
 * The exp of a tile runs as one float16 exp (vectorized by PoCL; 27% faster than scalar exp at
 * N=S=4096, d=40).
 *
 * Layout: every operand is read through element strides passed as int arguments, so the head
 * split/merge transposes of the exported graph are absorbed:
 *     q[b*qb + h*qh + n*qn + d]     k[b*kb + h*kh + s*kn + d]     v[b*vb + h*vh + s*vn + d]
 *     y[b*ob + h*oh + n*on + d]     mask[b*mb + h*mh + n*mn + s*ms]  (0 strides broadcast)
 * The head dim is contiguous (stride 1) in q, k, v and y (the lowering guarantees it).
 *
 * Compile-time specialization: the head dim D, the output chunk DC (D = NC·DC; DC < D only for
 * heads over 512 dims, which then recompute q·k once per chunk; the VAE's 512 is one chunk) and the rows per
 * work-item RB are macro arguments: the lowering emits one line
 *     ATT_DEFINE(attention_d40_c40_r4, 40, 40, 4)
 * per distinct (D, DC, RB) through cg_add_source(), so loops over D have constant trip counts
 * (unrolled / vectorized by the device compiler) and private arrays have exact sizes.
 * Launch: gws = {ceil(N / RB), H, B·NC}; lws = driver's choice.
 * This file does not depend on T (float32 only) and defines its macro once.
 */
#ifndef O2C_ATTENTION_CL
#define O2C_ATTENTION_CL

#define ATT_KT 16 /* keys per tile = the float16 width used for exp (RB x 16 scores private) */

/* dot product of two length-D rows; float4 loads when D is a multiple of 4 */
#define ATT_DOT(res, a, bp, D)                                                                   \
    do {                                                                                         \
        if (((D)&3) == 0) {                                                                      \
            float4 s4_ = (float4)(0.0f);                                                         \
            for (int t_ = 0; t_ < (D); t_ += 4) s4_ += vload4(0, (a) + t_) * vload4(0, (bp) + t_); \
            (res) = (s4_.x + s4_.y) + (s4_.z + s4_.w);                                           \
        } else {                                                                                 \
            float s1_ = 0.0f;                                                                    \
            for (int t_ = 0; t_ < (D); t_++) s1_ += (a)[t_] * (bp)[t_];                          \
            (res) = s1_;                                                                         \
        }                                                                                        \
    } while (0)

#define ATT_DEFINE(NAME, D, DC, RB)                                                              \
    __kernel void NAME(__global const float *restrict q, __global const float *restrict k,      \
                       __global const float *restrict v, __global const float *restrict mask,   \
                       __global float *restrict y, int N, int S, int NC, float scale,           \
                       int causal, int has_mask, int qb, int qh, int qn, int kb, int kh, int kn, \
                       int vb, int vh, int vn, int ob, int oh, int on, int mb, int mh, int mn,  \
                       int ms)                                                                  \
    {                                                                                            \
        const int r0 = (int)get_global_id(0) * (RB);                                             \
        const int h = (int)get_global_id(1);                                                     \
        const int b = (int)get_global_id(2) / NC;                                                \
        const int c0 = ((int)get_global_id(2) % NC) * (DC);                                      \
        if (r0 >= N) return;                                                                     \
        __global const float *qp = q + b * qb + h * qh;                                          \
        __global const float *kp = k + b * kb + h * kh;                                          \
        __global const float *vp = v + b * vb + h * vh + c0;                                     \
        __global const float *mp = mask + b * mb + h * mh;                                       \
        float acc[RB][DC], m[RB], l[RB], s[RB][ATT_KT];                                          \
        int row[RB];                                                                             \
        for (int r = 0; r < (RB); r++) {                                                         \
            row[r] = min(r0 + r, N - 1);                                                         \
            m[r] = -INFINITY;                                                                    \
            l[r] = 0.0f;                                                                         \
            for (int t = 0; t < (DC); t++) acc[r][t] = 0.0f;                                     \
        }                                                                                        \
        const int kend = causal ? min(S, r0 + (RB)) : S;                                         \
        for (int j0 = 0; j0 < kend; j0 += ATT_KT) {                                              \
            const int nk = min(ATT_KT, kend - j0);                                               \
            float tmax[RB];                                                                      \
            for (int r = 0; r < (RB); r++) {                                                     \
                tmax[r] = -INFINITY;                                                             \
                for (int jj = nk; jj < ATT_KT; jj++) s[r][jj] = -INFINITY;                       \
            }                                                                                    \
            for (int jj = 0; jj < nk; jj++) {                                                    \
                const int j = j0 + jj;                                                           \
                __global const float *kr = kp + j * kn;                                          \
                for (int r = 0; r < (RB); r++) {                                                 \
                    float d_;                                                                    \
                    ATT_DOT(d_, qp + row[r] * qn, kr, D);                                        \
                    float sc = d_ * scale;                                                       \
                    if (has_mask) sc += mp[row[r] * mn + j * ms];                                \
                    if (causal && j > row[r]) sc = -INFINITY;                                    \
                    s[r][jj] = sc;                                                               \
                    tmax[r] = fmax(tmax[r], sc);                                                 \
                }                                                                                \
            }                                                                                    \
            for (int r = 0; r < (RB); r++) {                                                     \
                const float mn_ = fmax(m[r], tmax[r]);                                           \
                const float corr = mn_ == -INFINITY ? 1.0f : exp(m[r] - mn_);                    \
                l[r] *= corr;                                                                    \
                for (int t = 0; t < (DC); t++) acc[r][t] *= corr;                                \
                m[r] = mn_;                                                                      \
                /* p = exp(s - m) for the whole tile at once (vector exp); 0 while m is -inf */   \
                float16 p16 = vload16(0, s[r]);                                                  \
                p16 = mn_ == -INFINITY ? (float16)(0.0f) : exp(p16 - mn_);                       \
                vstore16(p16, 0, s[r]);                                                          \
                float8 p8 = p16.lo + p16.hi;                                                     \
                float4 p4 = p8.lo + p8.hi;                                                       \
                l[r] += (p4.x + p4.y) + (p4.z + p4.w);                                           \
            }                                                                                    \
            for (int jj = 0; jj < nk; jj++) {                                                    \
                __global const float *vr = vp + (j0 + jj) * vn;                                  \
                float vv[DC];                                                                    \
                for (int t = 0; t < (DC); t++) vv[t] = vr[t];                                    \
                for (int r = 0; r < (RB); r++) {                                                 \
                    const float p = s[r][jj];                                                    \
                    for (int t = 0; t < (DC); t++) acc[r][t] += p * vv[t];                       \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        for (int r = 0; r < (RB); r++) {                                                         \
            if (r0 + r >= N) break;                                                              \
            __global float *yr = y + b * ob + h * oh + (r0 + r) * on + c0;                       \
            const float inv = 1.0f / l[r];                                                       \
            for (int t = 0; t < (DC); t++) yr[t] = acc[r][t] * inv;                              \
        }                                                                                        \
    }

#endif /* O2C_ATTENTION_CL */
