/* expand_deform.c — DeformConv-19/22 (2-D) as GridSample + MatMul.
 *
 * Spec / ONNX reference (onnx/reference/ops/op_deform_conv.py): for output (n, oc, i, j) and
 * kernel tap k = (ki, kj) of offset group g, the input of every channel of g is sampled bilinearly
 * (zero outside) at
 *     y = -pad_top  + stride_h*i + ki*dil_h + offset[n, g, k, 0, i, j]
 *     x = -pad_left + stride_w*j + kj*dil_w + offset[n, g, k, 1, i, j]
 * multiplied by mask[n, g, k, i, j] (1 if absent) and by W[oc, c', ki, kj], summed over the
 * channels c' of oc's group and the taps, plus B[oc].
 * Expansion (the reference itself samples with GridSample align_corners=1):
 *   pos   = Reshape(offset, [N,G,K,2,oh,ow]) + base[K,2,oh,ow] (constant)
 *   grid  = pos * [2/(ih-1), 2/(iw-1)] - 1, (y,x) -> (x,y), as [N*G, K*oh, ow, 2]
 *   s     = GridSample(Reshape(X, [N*G, C/G, ih, iw]), grid)  * mask   -> [N, C, K, oh*ow]
 *   y     = MatMul(W as [1, group, OC/group, C/group*K], s as [N, group, C/group*K, oh*ow])
 *           -> [N, OC, oh, ow] (+ B)
 * Limits (located errors): 2-D only, float32, ih and iw > 1 (the align_corners=1 normalization
 * divides by ih-1, iw-1).
 */
#include "passes/expand/expand.h"

void expand_deform_conv(struct ex_ctx *e)
{
    uint32_t x = ex_in(e, 0), w = ex_in(e, 1), off = ex_in(e, 2), b = ex_in(e, 3), mask = ex_in(e, 4);
    const struct ir_value *xv = ex_v(e, x), *wv = ex_v(e, w), *ov = ex_v(e, off);
    if (xv->rank != 4) ex_fatal(e, "X of rank %d: only 2-D DeformConv (rank 4) is supported", xv->rank);
    if (xv->dtype != IR_F32) ex_fatal(e, "X of dtype %s is not supported (float32)", ir_dtype_name(xv->dtype));
    if (wv->rank != 4 || ov->rank != 4) ex_fatal(e, "W and offset must have rank 4");
    int64_t n = xv->dims[0], c = xv->dims[1], ih = xv->dims[2], iw = xv->dims[3];
    int64_t oc = wv->dims[0], cg = wv->dims[1], kh = wv->dims[2], kw = wv->dims[3];
    int64_t oh = ov->dims[2], ow = ov->dims[3];
    int64_t group = ex_attr_int(e, "group", 1), og = ex_attr_int(e, "offset_group", 1);
    int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pd[4] = {0, 0, 0, 0};
    size_t cnt;
    const int64_t *a;
    if ((a = ir_attr_ints(ex_self(e), "strides", &cnt)) && cnt == 2) st[0] = a[0], st[1] = a[1];
    if ((a = ir_attr_ints(ex_self(e), "dilations", &cnt)) && cnt == 2) dl[0] = a[0], dl[1] = a[1];
    if ((a = ir_attr_ints(ex_self(e), "pads", &cnt)) && cnt == 4)
        for (int i = 0; i < 4; i++) pd[i] = a[i];
    if ((a = ir_attr_ints(ex_self(e), "kernel_shape", &cnt)) && cnt == 2 && (a[0] != kh || a[1] != kw))
        ex_fatal(e, "kernel_shape [%lld,%lld] differs from W's [%lld,%lld]", (long long)a[0], (long long)a[1],
                 (long long)kh, (long long)kw);
    if (group < 1 || c != cg * group || oc % group)
        ex_fatal(e, "group=%lld does not fit C=%lld, W [%lld,%lld,...]", (long long)group, (long long)c,
                 (long long)oc, (long long)cg);
    int64_t k = kh * kw;
    if (og < 1 || c % og || ov->dims[1] != og * k * 2 || ov->dims[0] != n)
        ex_fatal(e, "offset %s does not match offset_group=%lld and kernel %lldx%lld",
                 ov->name, (long long)og, (long long)kh, (long long)kw);
    if (ih < 2 || iw < 2) ex_fatal(e, "input height and width must be > 1 (got %lldx%lld)", (long long)ih, (long long)iw);
    int64_t p = oh * ow;

    /* base[k, 2, oh, ow]: the undeformed sampling positions (y, x) */
    float *base = ir_alloc(e->g, (size_t)(k * 2 * p) * sizeof(float));
    for (int64_t ki = 0; ki < kh; ki++)
        for (int64_t kj = 0; kj < kw; kj++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    int64_t t = ki * kw + kj;
                    base[(t * 2 + 0) * p + i * ow + j] = (float)(-pd[0] + st[0] * i + ki * dl[0]);
                    base[(t * 2 + 1) * p + i * ow + j] = (float)(-pd[1] + st[1] * j + kj * dl[1]);
                }
    int64_t bdims[4] = {k, 2, oh, ow};
    int64_t o6[6] = {n, og, k, 2, oh, ow};
    uint32_t pos = ex_op2(e, IR_OP_ADD, ex_reshape(e, off, 6, o6), ex_const(e, IR_F32, 4, bdims, base));
    float sc[2] = {2.0f / (float)(ih - 1), 2.0f / (float)(iw - 1)};
    int64_t sdims[3] = {2, 1, 1};
    uint32_t norm = ex_op2(e, IR_OP_SUB, ex_op2(e, IR_OP_MUL, pos, ex_const(e, IR_F32, 3, sdims, sc)),
                           ex_scalar(e, IR_F32, 1.0));
    int64_t swap[2] = {1, 0};
    norm = ex_gather(e, norm, ex_ints(e, 2, swap), 3);           /* (y, x) -> (x, y) */
    static const int64_t perm[6] = {0, 1, 2, 4, 5, 3};
    int64_t gdims[4] = {n * og, k * oh, ow, 2};
    uint32_t grid = ex_reshape(e, ex_transpose(e, norm, 6, perm), 4, gdims);
    int64_t xdims[4] = {n * og, c / og, ih, iw};
    uint32_t xs = ex_reshape(e, x, 4, xdims);
    uint32_t gs_in[2] = {xs, grid};
    uint32_t gs = ex_begin(e, IR_OP_GRID_SAMPLE, gs_in, 2, 1);
    ir_attr_set_string(e->g, gs, "mode", "bilinear");
    ir_attr_set_string(e->g, gs, "padding_mode", "zeros");
    ir_attr_set_int(e->g, gs, "align_corners", 1);
    uint32_t s = ex_end(e, gs); /* [N*G, C/G, K*oh, ow] */
    if (mask != IR_NONE) {
        int64_t mdims[4] = {n * og, 1, k * oh, ow};
        s = ex_op2(e, IR_OP_MUL, s, ex_reshape(e, mask, 4, mdims));
    }
    int64_t sdims4[4] = {n, group, cg * k, p};
    s = ex_reshape(e, s, 4, sdims4);
    int64_t wdims[4] = {1, group, oc / group, cg * k};
    uint32_t y = ex_op2(e, IR_OP_MATMUL, ex_reshape(e, w, 4, wdims), s); /* [N, group, OC/group, P] */
    int64_t ydims[4] = {n, oc, oh, ow};
    y = ex_reshape(e, y, 4, ydims);
    if (b != IR_NONE) {
        int64_t bd[4] = {1, oc, 1, 1};
        y = ex_op2(e, IR_OP_ADD, y, ex_reshape(e, b, 4, bd));
    }
    ex_output(e, 0, y);
}
