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

/* Copies n bytes; the sizes runs have (8 or 16 channels of float or half) get an inlined copy. */
static inline void copy_run(unsigned char *t, const unsigned char *s, size_t n)
{
    switch (n) {
    case 16: memcpy(t, s, 16); break;
    case 32: memcpy(t, s, 32); break;
    case 64: memcpy(t, s, 64); break;
    default: memcpy(t, s, n); break;
    }
}

void o2r_repack_conv(const struct o2r_repack *r, const void *src, void *dst)
{
    const int64_t OC = r->oc, cin = r->cin, KH = r->kh, KW = r->kw, K = cin * KH * KW;
    const int64_t so = r->src_ocb, to = r->dst_ocb, es = r->elem_bytes;
    const int64_t nbt = (OC + to - 1) / to;
    const unsigned char *s = src;
    unsigned char *t = dst;
    /* A target panel's channels are runs of consecutive channels of one source panel; source
     * element (panel p, direct k index kk, channel c) is at ((p * K + kk) * so + c). For each
     * target panel: its runs, then for each k in target order ((kh, ci, kw) direct, (ci, kh, kw)
     * flat) one copy per run. */
    int64_t run_src[65], run_len[65]; /* source offset (elements, for kk = 0) and length */
    for (int64_t bt = 0; bt < nbt; bt++) {
        int nrun = 0;
        int64_t pad = 0; /* channels past OC in this target panel */
        for (int64_t j = 0; j < to && nrun < 64;) {
            const int64_t o = bt * to + j;
            if (o >= OC) {
                pad = to - j;
                break;
            }
            int64_t len = so - o % so;
            len = len < to - j ? len : to - j;
            len = len < OC - o ? len : OC - o;
            run_src[nrun] = (o / so) * K * so + o % so;
            run_len[nrun++] = len;
            j += len;
        }
        for (int64_t a = 0; a < (r->flat ? cin : KH); a++)
            for (int64_t b = 0; b < (r->flat ? KH : cin); b++) {
                const int64_t kh = r->flat ? b : a, ci = r->flat ? a : b;
                for (int64_t kw = 0; kw < KW; kw++) {
                    const int64_t kk = (kh * cin + ci) * KW + kw; /* direct k index */
                    for (int q = 0; q < nrun; q++) {
                        copy_run(t, s + (run_src[q] + kk * so) * es, (size_t)(run_len[q] * es));
                        t += run_len[q] * es;
                    }
                    if (pad) {
                        memset(t, 0, (size_t)(pad * es));
                        t += pad * es;
                    }
                }
            }
    }
}
