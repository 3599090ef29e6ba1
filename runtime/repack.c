/* repack.c — the load-time rearrangement of conv weight panels (o2r_repack_conv), what lets one
 * weights file serve every --shape build of a model (with the weights layout hash a file must
 * match: o2r_stored_hash / o2r_desc_layout_hash in memplan.c).
 *
 * Why: a convolution's kernel form (direct or im2col, 8 or 16 output channels per work-item)
 * is chosen from its activation shape (codegen/sched_conv.c), and each form reads its weights
 * in its own panel order. The weights file keeps one form fixed by the weight's dims (direct,
 * the base channel block) and the runtime rearranges it on the host for the form the build
 * runs, before the upload; forms of equal byte size, so the offsets and the payload do not
 * depend on --shape.
 * Assumes: desc passed validate_desc (model.c) or comes from the compiler.
 * Guarantees: pure host code, no allocation; every byte of the target is written.
 */
#include <string.h>

#include "rt_internal.h"

void o2r_repack_conv(const struct o2r_repack *r, const void *src, void *dst)
{
    const int64_t OC = r->oc, cin = r->cin, KH = r->kh, KW = r->kw;
    const int64_t so = r->src_ocb, to = r->dst_ocb, es = r->elem_bytes;
    const int64_t nbt = (OC + to - 1) / to;
    const unsigned char *s = src;
    unsigned char *t = dst;
    /* target order: panel, then (kh, ci, kw) direct or (ci, kh, kw) flat, then channel; the
     * channels of one target panel are runs of consecutive source channels (a run ends at a
     * source panel's end): each run is one memcpy */
    for (int64_t bt = 0; bt < nbt; bt++)
        for (int64_t a = 0; a < (r->flat ? cin : KH); a++)
            for (int64_t b = 0; b < (r->flat ? KH : cin); b++)
                for (int64_t kw = 0; kw < KW; kw++) {
                    const int64_t kh = r->flat ? b : a, ci = r->flat ? a : b;
                    for (int64_t j = 0; j < to;) {
                        const int64_t o = bt * to + j;
                        if (o >= OC) { /* padded channels */
                            memset(t, 0, (size_t)((to - j) * es));
                            t += (to - j) * es;
                            break;
                        }
                        int64_t run = so - o % so;
                        run = run < to - j ? run : to - j;
                        run = run < OC - o ? run : OC - o;
                        const int64_t si = ((((o / so) * KH + kh) * cin + ci) * KW + kw) * so +
                                           o % so;
                        memcpy(t, s + si * es, (size_t)(run * es));
                        t += run * es;
                        j += run;
                    }
                }
}
