/* winograd.cl — Winograd F(4x4, 3x3) convolution for CPUs (codegen/sched_conv.c chooses it for
 * 2-D 3x3 convs with stride 1, dilation 1, group 1 and constant weights where its cost model
 * says it is faster than fconv_v). Computes the same y as kernels/fconv.cl, epilogue included:
 *   y = (act(conv(x, w) + bias[oc]) + res[n*rn + oc*rc + p*rp]) / div, split over Y..Y3.
 *
 * Algorithm (Lavin & Gray 2015, points 0, 1, -1, 2, -2, inf): every 4x4 output tile reads a
 * 6x6 input patch d (overlap 2 with its neighbours) and is
 *   Y = Aᵀ [ sum_c (G g_kc Gᵀ) ⊙ (Bᵀ d_c B) ] A
 * i.e. 36 independent products M[ξ] = U[ξ] (K x C) · V[ξ] (C x tiles), ξ = 6*row + column of
 * the 6x6 transform domain: 36 multiply-adds per 16 outputs and channel (direct: 144).
 *   Bᵀ = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
 *   G  = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
 *   Aᵀ = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
 * Float32 throughout (tests/perf_conv/test_conv_variants.c checks every element against a
 * double reference; the transforms add ~1e-6 relative error on SD-sized sums).
 *
 * Tiles: TH = ceil(OH/4) tile rows, TW = ceil(OW/4) tiles per row, grouped in blocks of 16
 * consecutive tiles of one row (one float16 lane each: lane t of block b is tile tw = 16b + t,
 * output columns 4tw .. 4tw+3); TWB = ceil(TW/16) blocks per row; block index
 * pt = (n*TH + th)*TWB + b, PT = N*TH*TWB. Lanes past TW and rows/columns past OH/OW compute
 * from zero padding and are never stored. The launches run blocks pt0 .. pt0+PTC-1 (a chunk:
 * the temporaries hold PTC blocks, codegen bounds their size).
 * Layouts (float32, dense):
 *   Wp  the fconv_v panel constant [ceil(K/BO)][3][C][3][BO] (BO = 4 or 8; float32 or half, WS)
 *   U   [36][KB][C][16]      KB = ceil(K/16); zero for k >= K        (wino_filter_<WS>)
 *   V   [36][PTC][C][16]     lane = tile of the block                  (wino_in)
 *   M   [36][PTC][KB*16][16]                                           (wino_gemm)
 * Launches (lws 1: each work-item is an explicitly vectorized tile):
 *   wino_filter_<WS> (WINO_FILTER_DEFINE(WS), emitted for the storage a build uses): gws {KB}: U from Wp, 16 output channels (lanes) x every input channel;
 *     every run (the weights file keeps the fconv_v form: one file for every --shape and conv
 *     variant)
 *   wino_in:   gws {ceil(C/16), PTC}: 16 channels of one block, per channel 6 input rows of 66
 *     columns -> 36 float16
 *   wino_gemm: gws {PTC, 36}: every output channel (16 at a time, float16 accumulators:
 *     kernels/fconv.cl FV_DECL / FV_FMA) x 16 tiles of one ξ; ξ slowest so U[ξ] stays in cache
 *     across blocks, the block's V run in L1 across the channel panels
 *   wino_out:  gws {KB, PTC}: Aᵀ M A for 16 channels of one block, epilogue and store of 4 rows
 *     of 64 columns (kernels/fconv.cl fconv_v_store, fc_split)
 * (PoCL runs each work-group with a fixed overhead: work-items loop over channels so that a
 * work-group is tens of microseconds of work.)
 * Needs kernels/fconv.cl before it (the codegen includes both). Indices fit in int (checked).
 */
#ifndef O2C_WINOGRAD_CL
#define O2C_WINOGRAD_CL

/* e = d B over one 6-vector: the column transform (the same formula gives Bᵀ d). */
#define WG_BT(d0, d1, d2, d3, d4, d5, e0, e1, e2, e3, e4, e5)                                   \
    do {                                                                                        \
        e0 = 4.0f * (d0) - 5.0f * (d2) + (d4);                                                  \
        e1 = -4.0f * ((d1) + (d2)) + (d3) + (d4);                                               \
        e2 = 4.0f * ((d1) - (d2)) - (d3) + (d4);                                                \
        e3 = 2.0f * ((d3) - (d1)) - (d2) + (d4);                                                \
        e4 = 2.0f * ((d1) - (d3)) - (d2) + (d4);                                                \
        e5 = 4.0f * (d1) - 5.0f * (d3) + (d5);                                                  \
    } while (0)

/* y = Aᵀ m over one 6-vector. */
#define WG_AT(m0, m1, m2, m3, m4, m5, y0, y1, y2, y3)                                           \
    do {                                                                                        \
        const float16 wg_p12 = (m1) + (m2), wg_m12 = (m1) - (m2);                               \
        const float16 wg_p34 = (m3) + (m4), wg_m34 = (m3) - (m4);                               \
        y0 = (m0) + wg_p12 + wg_p34;                                                            \
        y1 = wg_m12 + 2.0f * wg_m34;                                                            \
        y2 = wg_p12 + 4.0f * wg_p34;                                                            \
        y3 = wg_m12 + 8.0f * wg_m34 + (m5);                                                     \
    } while (0)

/* u = G g over one 3-vector (scalars). */
#define WG_G(g0, g1, g2, u0, u1, u2, u3, u4, u5)                                                \
    do {                                                                                        \
        u0 = 0.25f * (g0);                                                                      \
        u1 = -((g0) + (g1) + (g2)) / 6.0f;                                                      \
        u2 = -((g0) - (g1) + (g2)) / 6.0f;                                                      \
        u3 = (g0) / 24.0f + (g1) / 12.0f + (g2) / 6.0f;                                         \
        u4 = (g0) / 24.0f - (g1) / 12.0f + (g2) / 6.0f;                                         \
        u5 = (g2);                                                                              \
    } while (0)

/* U[ξ][kb][c][0..15] = (G g Gᵀ)[ξ] for the 3x3 filters g of channels k = 16kb.. (lanes) and
 * every input channel c, read from the fconv_v panels Wp (BO channels per panel); zero for
 * k >= K. One work-item per kb. */
#define WG_UST(y, u0, u1, u2, u3, u4, u5)                                                       \
    do {                                                                                        \
        vstore16(u0, 0, u + (6 * (y) + 0) * xs);                                                \
        vstore16(u1, 0, u + (6 * (y) + 1) * xs);                                                \
        vstore16(u2, 0, u + (6 * (y) + 2) * xs);                                                \
        vstore16(u3, 0, u + (6 * (y) + 3) * xs);                                                \
        vstore16(u4, 0, u + (6 * (y) + 4) * xs);                                                \
        vstore16(u5, 0, u + (6 * (y) + 5) * xs);                                                \
    } while (0)
#define WG_UROW(y)                                                                              \
    do {                                                                                        \
        float16 u0, u1, u2, u3, u4, u5;                                                         \
        WG_G(t##y##0, t##y##1, t##y##2, u0, u1, u2, u3, u4, u5);                                \
        WG_UST(y, u0, u1, u2, u3, u4, u5);                                                      \
    } while (0)
#define WINO_FILTER_DEFINE(WS)                                                                   \
    __kernel __attribute__((reqd_work_group_size(1, 1, 1))) void wino_filter_##WS(              \
        __global const O2C_WT(WS) *restrict Wp, __global float *restrict U, int C, int K,       \
        int BO)                                                                                  \
    {                                                                                            \
        const int kb = (int)get_global_id(0), KB = (int)get_global_size(0);                     \
        const size_t xs = (size_t)KB * C * 16; /* elements from one ξ to the next */             \
        float tmp[9 * 16];                                                                       \
        for (int c = 0; c < C; c++) {                                                            \
            for (int l = 0; l < 16; l++) {                                                       \
                const int k = kb * 16 + l;                                                       \
                __global const O2C_WT(WS) *w = Wp + (size_t)(k / BO) * 9 * C * BO + k % BO;      \
                for (int i = 0; i < 9; i++)                                                      \
                    tmp[i * 16 + l] =                                                            \
                        k < K ? O2C_WLOAD1(WS, ((i / 3) * C + c) * 3 * BO + (i % 3) * BO, w)     \
                              : 0.0f;                                                            \
            }                                                                                    \
            float16 t00, t01, t02, t10, t11, t12, t20, t21, t22, t30, t31, t32, t40, t41, t42,   \
                t50, t51, t52; /* t = G g: [6][3] */                                             \
            WG_G(vload16(0, tmp), vload16(3, tmp), vload16(6, tmp), t00, t10, t20, t30, t40,     \
                 t50);                                                                           \
            WG_G(vload16(1, tmp), vload16(4, tmp), vload16(7, tmp), t01, t11, t21, t31, t41,     \
                 t51);                                                                           \
            WG_G(vload16(2, tmp), vload16(5, tmp), vload16(8, tmp), t02, t12, t22, t32, t42,     \
                 t52);                                                                           \
            __global float *u = U + ((size_t)kb * C + c) * 16;                                    \
            WG_UROW(0);                                                                          \
            WG_UROW(1);                                                                          \
            WG_UROW(2);                                                                          \
            WG_UROW(3);                                                                          \
            WG_UROW(4);                                                                          \
            WG_UROW(5);                                                                          \
        }                                                                                        \
    }

/* The 6 patch columns of 16 tiles from 66 consecutive input columns held in L0..L3 (columns
 * 0..63) and l64, l65: lane t of column j is column 4t + j (swizzles: shuffles, no gathers). */
#define WG_COLS(L0, L1, L2, L3, l64, l65, d0, d1, d2, d3, d4, d5)                               \
    do {                                                                                        \
        d0 = (float16)(L0.s048c, L1.s048c, L2.s048c, L3.s048c);                                 \
        d1 = (float16)(L0.s159d, L1.s159d, L2.s159d, L3.s159d);                                 \
        d2 = (float16)(L0.s26ae, L1.s26ae, L2.s26ae, L3.s26ae);                                 \
        d3 = (float16)(L0.s37bf, L1.s37bf, L2.s37bf, L3.s37bf);                                 \
        d4 = (float16)(L0.s48c, L1.s0, L1.s48c, L2.s0, L2.s48c, L3.s0, L3.s48c, l64);           \
        d5 = (float16)(L0.s59d, L1.s1, L1.s59d, L2.s1, L2.s59d, L3.s1, L3.s59d, l65);           \
    } while (0)

/* The 66 columns s[0..65] of a row whose column s[0] is input column c0 into buf (zeros
 * outside [0, W)). */
static inline void wg_load_edge(__global const float *s, int c0, int W, float *buf)
{
    for (int i = 0; i < 66; i++) buf[i] = c0 + i >= 0 && c0 + i < W ? s[i] : 0.0f;
}

/* One patch row r: load it (zeros outside the input) and transform it: e_r0..e_r5 = d_r B. */
#define WG_IN_ROW(r)                                                                             \
    do {                                                                                         \
        const int ih = ih0 + (r);                                                                \
        float16 L0 = 0.0f, L1 = 0.0f, L2 = 0.0f, L3 = 0.0f;                                      \
        float l64 = 0.0f, l65 = 0.0f;                                                            \
        if (ih >= 0 && ih < H) {                                                                 \
            __global const float *s = src + (size_t)ih * W + iw0;                                \
            if (iw0 >= 0 && iw0 + 66 <= W) {                                                     \
                L0 = vload16(0, s);                                                              \
                L1 = vload16(1, s);                                                              \
                L2 = vload16(2, s);                                                              \
                L3 = vload16(3, s);                                                              \
                l64 = s[64];                                                                     \
                l65 = s[65];                                                                     \
            } else { /* a row edge: one scalar loop (small code: PoCL compiles it 6 times) */   \
                wg_load_edge(s, iw0, W, buf);                                                    \
                L0 = vload16(0, buf);                                                            \
                L1 = vload16(1, buf);                                                            \
                L2 = vload16(2, buf);                                                            \
                L3 = vload16(3, buf);                                                            \
                l64 = buf[64];                                                                   \
                l65 = buf[65];                                                                   \
            }                                                                                    \
        }                                                                                        \
        float16 d0, d1, d2, d3, d4, d5;                                                          \
        WG_COLS(L0, L1, L2, L3, l64, l65, d0, d1, d2, d3, d4, d5);                               \
        WG_BT(d0, d1, d2, d3, d4, d5, e##r##0, e##r##1, e##r##2, e##r##3, e##r##4, e##r##5);     \
    } while (0)

/* Column x of the patch: V[6*y + x] = (Bᵀ e)[y][x], stored at dst + ξ*xs, ξ = 6y + x. */
#define WG_IN_COL(dst, xs, x)                                                                    \
    do {                                                                                         \
        float16 v0, v1, v2, v3, v4, v5;                                                          \
        WG_BT(e0##x, e1##x, e2##x, e3##x, e4##x, e5##x, v0, v1, v2, v3, v4, v5);                 \
        vstore16(v0, 0, (dst) + (0 * 6 + (x)) * (xs));                                           \
        vstore16(v1, 0, (dst) + (1 * 6 + (x)) * (xs));                                           \
        vstore16(v2, 0, (dst) + (2 * 6 + (x)) * (xs));                                           \
        vstore16(v3, 0, (dst) + (3 * 6 + (x)) * (xs));                                           \
        vstore16(v4, 0, (dst) + (4 * 6 + (x)) * (xs));                                           \
        vstore16(v5, 0, (dst) + (5 * 6 + (x)) * (xs));                                           \
    } while (0)

#define WG_DECL6(p) float16 p##0, p##1, p##2, p##3, p##4, p##5

/* The 36 transformed vectors of input channel c of the block (n, th, b): V values of ξ at
 * dst + ξ*xs. Needs ih0, iw0, H, W, X, C, n and buf[68]. */
#define WG_IN_CHANNEL(c, dst, xs)                                                                \
    do {                                                                                         \
        __global const float *src = X + ((size_t)n * C + (c)) * H * W;                           \
        WG_DECL6(e0);                                                                            \
        WG_DECL6(e1);                                                                            \
        WG_DECL6(e2);                                                                            \
        WG_DECL6(e3);                                                                            \
        WG_DECL6(e4);                                                                            \
        WG_DECL6(e5);                                                                            \
        WG_IN_ROW(0);                                                                            \
        WG_IN_ROW(1);                                                                            \
        WG_IN_ROW(2);                                                                            \
        WG_IN_ROW(3);                                                                            \
        WG_IN_ROW(4);                                                                            \
        WG_IN_ROW(5);                                                                            \
        WG_IN_COL(dst, xs, 0);                                                                   \
        WG_IN_COL(dst, xs, 1);                                                                   \
        WG_IN_COL(dst, xs, 2);                                                                   \
        WG_IN_COL(dst, xs, 3);                                                                   \
        WG_IN_COL(dst, xs, 4);                                                                   \
        WG_IN_COL(dst, xs, 5);                                                                   \
    } while (0)

/* The block of 16 tiles pt: batch n, tile row th, block b of the row, first patch row/column. */
#define WG_BLOCK(pt)                                                                             \
    const int b = (pt) % TWB, nt = (pt) / TWB, th = nt % TH, n = nt / TH;                        \
    const int ih0 = th * 4 - ph, iw0 = b * 64 - pw

/* V for channels 16cb .. 16cb+15 (< C) of block pt0 + q (see the banner). ph, pw: the conv's
 * begin pads. */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void wino_in(
    __global const float *restrict X, __global float *restrict V, int C, int H, int W, int TH,
    int TWB, int ph, int pw, int pt0)
{
    const int cb = (int)get_global_id(0), q = (int)get_global_id(1);
    const int PTC = (int)get_global_size(1);
    WG_BLOCK(pt0 + q);
    const size_t xs = (size_t)PTC * C * 16;
    float buf[68];
    for (int c = cb * 16; c < C && c < cb * 16 + 16; c++) {
        __global float *dst = V + ((size_t)q * C + c) * 16;
        WG_IN_CHANNEL(c, dst, xs);
    }
}

/* M[ξ][q] (all KB*16 channels x 16 tiles) = sum_c U[ξ][kb][c] (x) V[ξ][q][c], 16 channels at
 * a time (the V run of the block stays in cache). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void wino_gemm(
    __global const float *restrict U, __global const float *restrict V, __global float *restrict M,
    int C, int KB)
{
    const int q = (int)get_global_id(0), xi = (int)get_global_id(1);
    const int PTC = (int)get_global_size(0);
    const int OCB = 16, SPB = 16, fv_pst = 0; /* FV_FMA: one panel of 16 channels */
    __global const float *xb = V + ((size_t)xi * PTC + q) * C * 16;
    for (int kb = 0; kb < KB; kb++) {
        __global const float *xp = xb;
        __global const float *wp = U + ((size_t)xi * KB + kb) * C * 16;
        FV_DECL(a);
        for (int c = 0; c < C; c++, xp += 16, wp += 16) {
            const float16 x0 = vload16(0, xp);
            FV_FMA(a, x0, wp, OCB, f32);
        }
        __global float *mp = M + (((size_t)xi * PTC + q) * KB + kb) * 256;
#define WG_MST(j, A, B) vstore16(A, j, mp);
        FV_STORE_ALL(WG_MST)
#undef WG_MST
    }
    (void)SPB;
    (void)fv_pst;
}

/* Row i of the output tile of 16 lanes -> 64 consecutive columns in 4 float16 (column 4t + j
 * from lane t of y_ij: swizzles), then epilogue and store. */
#define WG_OUT_ROW(i)                                                                            \
    do {                                                                                         \
        const int oh = th * 4 + (i);                                                             \
        if (oh < OH) {                                                                           \
            __global float *yr = yb + oh * OW;                                                   \
            const int r = rb + oh * OW * rp;                                                     \
            fconv_v_store(WG_ROW16(y##i##0, y##i##1, y##i##2, y##i##3, 0, 1, 2, 3), yr, Res, r,  \
                          ow0, OW, bv, act, has_res, rp, has_div, div);                          \
            fconv_v_store(WG_ROW16(y##i##0, y##i##1, y##i##2, y##i##3, 4, 5, 6, 7), yr, Res, r,  \
                          ow0 + 16, OW, bv, act, has_res, rp, has_div, div);                     \
            fconv_v_store(WG_ROW16(y##i##0, y##i##1, y##i##2, y##i##3, 8, 9, a, b), yr, Res, r,  \
                          ow0 + 32, OW, bv, act, has_res, rp, has_div, div);                     \
            fconv_v_store(WG_ROW16(y##i##0, y##i##1, y##i##2, y##i##3, c, d, e, f), yr, Res, r,  \
                          ow0 + 48, OW, bv, act, has_res, rp, has_div, div);                     \
        }                                                                                        \
    } while (0)
/* columns 4t .. 4t+3 for the 4 lanes t = l0..l3 (hex digits) of y0..y3 */
#define WG_ROW16(y0, y1, y2, y3, l0, l1, l2, l3)                                                 \
    ((float16)(y0.s##l0, y1.s##l0, y2.s##l0, y3.s##l0, y0.s##l1, y1.s##l1, y2.s##l1, y3.s##l1,   \
               y0.s##l2, y1.s##l2, y2.s##l2, y3.s##l2, y0.s##l3, y1.s##l3, y2.s##l3, y3.s##l3))

/* Column x of the transform domain: s_ix = (Aᵀ m)[i][x] for i < 4 (M of ξ at mp + ξ*xs). */
#define WG_OUT_COL(mp, xs, x)                                                                    \
    WG_AT(vload16(0, (mp) + (0 * 6 + (x)) * (xs)), vload16(0, (mp) + (1 * 6 + (x)) * (xs)),      \
          vload16(0, (mp) + (2 * 6 + (x)) * (xs)), vload16(0, (mp) + (3 * 6 + (x)) * (xs)),      \
          vload16(0, (mp) + (4 * 6 + (x)) * (xs)), vload16(0, (mp) + (5 * 6 + (x)) * (xs)),      \
          s0##x, s1##x, s2##x, s3##x)

/* Output channel k of the block (n, th, b): Aᵀ M A from the 36 vectors at mp + ξ*xs
 * (__global or __local), then the fconv epilogue and store (arguments as fconv_v's). */
#define WG_OUT_CHANNEL(k, mp, xs)                                                                \
    do {                                                                                         \
        WG_DECL6(s0);                                                                            \
        WG_DECL6(s1);                                                                            \
        WG_DECL6(s2);                                                                            \
        WG_DECL6(s3);                                                                            \
        WG_OUT_COL(mp, xs, 0);                                                                   \
        WG_OUT_COL(mp, xs, 1);                                                                   \
        WG_OUT_COL(mp, xs, 2);                                                                   \
        WG_OUT_COL(mp, xs, 3);                                                                   \
        WG_OUT_COL(mp, xs, 4);                                                                   \
        WG_OUT_COL(mp, xs, 5);                                                                   \
        float16 y00, y01, y02, y03, y10, y11, y12, y13, y20, y21, y22, y23, y30, y31, y32, y33;  \
        WG_AT(s00, s01, s02, s03, s04, s05, y00, y01, y02, y03);                                 \
        WG_AT(s10, s11, s12, s13, s14, s15, y10, y11, y12, y13);                                 \
        WG_AT(s20, s21, s22, s23, s24, s25, y20, y21, y22, y23);                                 \
        WG_AT(s30, s31, s32, s33, s34, s35, y30, y31, y32, y33);                                 \
        const float bv = has_bias ? Bias[k] : 0.0f;                                              \
        int yo;                                                                                  \
        const int ys = fc_split(n, (k), OH * OW, OC, o1, o2, o3, &yo);                           \
        __global float *yb = FC_YSEL(ys, Y, Y1, Y2, Y3) + (size_t)yo;                            \
        const int rb = n * rn + (k) * rc, ow0 = b * 64;                                          \
        WG_OUT_ROW(0);                                                                           \
        WG_OUT_ROW(1);                                                                           \
        WG_OUT_ROW(2);                                                                           \
        WG_OUT_ROW(3);                                                                           \
    } while (0)

/* Y for output channels 16kb .. 16kb+15 (< OC) of block pt0 + q: Aᵀ M A, then the fconv
 * epilogue (see the banner; arguments as fconv_v's). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void wino_out(
    __global const float *restrict M, __global const float *restrict Bias,
    __global const float *restrict Res, __global float *restrict Y, __global float *Y1,
    __global float *Y2, __global float *Y3, int KB, int OH, int OW, int TH, int TWB, int pt0,
    int OC, int o1, int o2, int o3, int has_bias, int act, int has_res, int rn, int rc, int rp,
    int has_div, float div)
{
    const int kb = (int)get_global_id(0), q = (int)get_global_id(1);
    const int PTC = (int)get_global_size(1), ph = 0, pw = 0;
    WG_BLOCK(pt0 + q);
    const size_t xs = (size_t)PTC * KB * 256;
    for (int k = kb * 16; k < OC && k < kb * 16 + 16; k++) {
        __global const float *mp = M + ((size_t)q * KB * 16 + k) * 16;
        WG_OUT_CHANNEL(k, mp, xs);
    }
    (void)ih0;
    (void)iw0;
}

#endif /* O2C_WINOGRAD_CL */
