/* expand_einsum.c — Einsum-12 as Transpose/Reshape/Slice/Mul/ReduceSum/MatMul.
 *
 * Equation "t1,t2,...->out" (spaces ignored), each term letters [a-zA-Z] and at most one "..."
 * (the operand's leading-or-middle dims not named by letters; ellipsis dims of all operands
 * broadcast right-aligned, numpy style). Without "->" the output is the ellipsis dims followed by
 * the letters that occur exactly once in the whole left side, in ASCII order (numpy's implicit
 * mode). Algebra, per operand:
 *   1. diagonal for a letter repeated in one term: move the two axes last, view them as one axis
 *      of n*n and Slice it with step n+1 (x[..., i, i] without arithmetic, any dtype);
 *   2. ReduceSum the letters that no other operand and not the output has;
 * then either
 *   MatMul path (two float32 operands sharing at least one summed letter of equal size):
 *      A -> [batch..., M, K], B -> [batch..., K, N] (batch = letters in both and the output,
 *      M = A's other output letters, N = B's, K = the summed shared letters), MatMul, reshape to
 *      [batch..., m..., n...] and Transpose to the output order;
 *   or the general path: every operand transposed to one common order (output letters first,
 *      then summed letters) with size-1 axes for its missing letters, multiplied with
 *      broadcasting (Mul), ReduceSum over the summed letters (keepdims 0).
 * Assumes: inputs' dims known (expand.h). Guarantees: numpy.einsum's result (the ONNX reference
 * runs numpy.einsum) up to float rounding of the summation order; integers exact; a malformed
 * equation, size mismatch or an ellipsis missing from an explicit output is fatal and named.
 */
#include "passes/expand/expand.h"

#include <string.h>

#include "ref/ref_util.h"

#define EIN_MAX_OPS 32
#define ELL_LABEL 128 /* labels ELL_LABEL + j name ellipsis dim j (of E, right-aligned) */

/* One operand during the expansion. */
struct ein_op {
    uint32_t v;              /* current value */
    int rank;                /* its rank */
    int lab[IR_MAX_RANK];    /* label per axis */
    int64_t dim[IR_MAX_RANK];/* size per axis */
};

/* Reloads rank/dims of o->v (after an ex_* call made it). */
static void ein_sync(struct ex_ctx *e, struct ein_op *o)
{
    const struct ir_value *x = ex_v(e, o->v);
    o->rank = x->rank;
    for (int k = 0; k < x->rank; k++) o->dim[k] = x->dims[k];
}

/* Parses one term s[0..len) into labels (ellipsis dims expanded for an operand of rank `rank`,
 * out of E in all); rank < 0: the output term (ellipsis = all E dims). Returns the label count. */
static int parse_term(struct ex_ctx *e, const char *s, size_t len, int rank, int E, int *lab,
                      bool *has_ell)
{
    int nlet = 0;
    *has_ell = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (*has_ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                ex_fatal(e, "Einsum: equation term '%.*s' has a malformed ellipsis", (int)len, s);
            *has_ell = true;
            i += 2;
        } else if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')) {
            nlet++;
        } else {
            ex_fatal(e, "Einsum: equation term '%.*s' has the character '%c' (letters and ... only)",
                     (int)len, s, s[i]);
        }
    }
    int ell = rank < 0 ? E : rank - nlet;
    if (rank >= 0 && (ell < 0 || (!*has_ell && ell != 0)))
        ex_fatal(e, "Einsum: term '%.*s' names %d axes but its operand has rank %d", (int)len, s,
                 nlet, rank);
    if (!*has_ell) ell = 0;
    if (nlet + ell > IR_MAX_RANK) ex_fatal(e, "Einsum: term '%.*s' has too many axes", (int)len, s);
    int n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            for (int j = 0; j < ell; j++) lab[n++] = ELL_LABEL + E - ell + j;
            i += 2;
        } else {
            lab[n++] = (unsigned char)s[i];
        }
    }
    return n;
}

/* Takes the diagonal of every letter repeated within operand o (step 1 of the banner). */
static void ein_diagonals(struct ex_ctx *e, struct ein_op *o)
{
    for (;;) {
        int p = -1, q = -1;
        for (int a = 0; a < o->rank && p < 0; a++)
            for (int b = a + 1; b < o->rank; b++)
                if (o->lab[a] == o->lab[b]) {
                    p = a, q = b;
                    break;
                }
        if (p < 0) return;
        int64_t n = o->dim[p];
        if (o->dim[q] != n)
            ex_fatal(e, "Einsum: letter '%c' repeated in one term has sizes %lld and %lld", o->lab[p],
                     (long long)n, (long long)o->dim[q]);
        int64_t perm[IR_MAX_RANK], dims[IR_MAX_RANK];
        int lab[IR_MAX_RANK], r = 0;
        for (int a = 0; a < o->rank; a++)
            if (a != p && a != q) perm[r] = a, dims[r] = o->dim[a], lab[r++] = o->lab[a];
        int keep = o->lab[p];
        perm[r] = p, perm[r + 1] = q;
        uint32_t t = ex_transpose(e, o->v, o->rank, perm);
        dims[r] = n * n;
        t = ex_reshape(e, t, r + 1, dims);
        o->v = ex_slice(e, t, r, 0, n * n, n + 1);
        for (int a = 0; a < r; a++) o->lab[a] = lab[a];
        o->lab[r] = keep;
        ein_sync(e, o);
    }
}

/* Index of label l in lab[0..n), -1 if absent. */
static int find_lab(const int *lab, int n, int l)
{
    for (int k = 0; k < n; k++)
        if (lab[k] == l) return k;
    return -1;
}

/* Transposes o so its labels follow `order` (labels of o must all be in order); reshapes with
 * size-1 axes for order's labels o lacks when `full`. */
static uint32_t ein_align(struct ex_ctx *e, struct ein_op *o, const int *order, int norder, bool full)
{
    int64_t perm[IR_MAX_RANK], dims[IR_MAX_RANK];
    int r = 0;
    for (int k = 0; k < norder; k++) {
        int a = find_lab(o->lab, o->rank, order[k]);
        if (a >= 0) perm[r++] = a;
        if (full) dims[k] = a >= 0 ? o->dim[a] : 1;
    }
    IR_ASSERT(r == o->rank);
    uint32_t t = ex_transpose(e, o->v, o->rank, perm);
    return full && norder != o->rank ? ex_reshape(e, t, norder, dims) : t;
}

/* The MatMul path for two prepared operands; returns IR_NONE when it does not apply. */
static uint32_t ein_matmul(struct ex_ctx *e, struct ein_op *a, struct ein_op *b, const int *out, int nout)
{
    int bl[IR_MAX_RANK], ml[IR_MAX_RANK], nl[IR_MAX_RANK], kl[IR_MAX_RANK];
    int nb = 0, nm = 0, nn = 0, nk = 0;
    int64_t M = 1, N = 1, K = 1;
    bool same_batch = true;
    int64_t bsz[IR_MAX_RANK], ab[IR_MAX_RANK], bb[IR_MAX_RANK];
    for (int k = 0; k < nout; k++) {
        int pa = find_lab(a->lab, a->rank, out[k]), pb = find_lab(b->lab, b->rank, out[k]);
        if (pa >= 0 && pb >= 0) {
            ab[nb] = a->dim[pa], bb[nb] = b->dim[pb];
            bsz[nb] = ab[nb] > bb[nb] ? ab[nb] : bb[nb];
            same_batch &= ab[nb] == bb[nb];
            bl[nb++] = out[k];
        } else if (pa >= 0) {
            ml[nm++] = out[k], M *= a->dim[pa];
        } else if (pb >= 0) {
            nl[nn++] = out[k], N *= b->dim[pb];
        }
    }
    for (int k = 0; k < a->rank; k++) {
        if (find_lab(out, nout, a->lab[k]) >= 0) continue;
        int pb = find_lab(b->lab, b->rank, a->lab[k]);
        if (pb < 0 || b->dim[pb] != a->dim[k]) return IR_NONE; /* summed with broadcasting */
        kl[nk++] = a->lab[k], K *= a->dim[k];
    }
    if (nk == 0 || nb + 2 > IR_MAX_RANK) return IR_NONE;
    int order[IR_MAX_RANK], n = 0;
    int64_t dims[IR_MAX_RANK];
    /* A -> [batch..., M, K] */
    for (int k = 0; k < nb; k++) order[n++] = bl[k];
    for (int k = 0; k < nm; k++) order[n++] = ml[k];
    for (int k = 0; k < nk; k++) order[n++] = kl[k];
    uint32_t av = ein_align(e, a, order, n, false);
    int r = 0;
    if (same_batch) {
        int64_t p = 1;
        for (int k = 0; k < nb; k++) p *= ab[k];
        if (nb) dims[r++] = p;
    } else {
        for (int k = 0; k < nb; k++) dims[r++] = ab[k];
    }
    dims[r] = M, dims[r + 1] = K;
    av = ex_reshape(e, av, r + 2, dims);
    /* B -> [batch..., K, N] */
    n = 0;
    for (int k = 0; k < nb; k++) order[n++] = bl[k];
    for (int k = 0; k < nk; k++) order[n++] = kl[k];
    for (int k = 0; k < nn; k++) order[n++] = nl[k];
    uint32_t bv = ein_align(e, b, order, n, false);
    r = 0;
    if (same_batch) {
        int64_t p = 1;
        for (int k = 0; k < nb; k++) p *= bb[k];
        if (nb) dims[r++] = p;
    } else {
        for (int k = 0; k < nb; k++) dims[r++] = bb[k];
    }
    dims[r] = K, dims[r + 1] = N;
    bv = ex_reshape(e, bv, r + 2, dims);
    uint32_t y = ex_op2(e, IR_OP_MATMUL, av, bv);
    /* [batch..., m..., n...] in output order */
    int lab[IR_MAX_RANK];
    n = 0;
    for (int k = 0; k < nb; k++) lab[n] = bl[k], dims[n++] = bsz[k];
    for (int k = 0; k < nm; k++) lab[n] = ml[k], dims[n++] = a->dim[find_lab(a->lab, a->rank, ml[k])];
    for (int k = 0; k < nn; k++) lab[n] = nl[k], dims[n++] = b->dim[find_lab(b->lab, b->rank, nl[k])];
    y = ex_reshape(e, y, n, dims);
    int64_t perm[IR_MAX_RANK];
    for (int k = 0; k < nout; k++) perm[k] = find_lab(lab, n, out[k]);
    return ex_transpose(e, y, nout, perm);
}

void expand_einsum(struct ex_ctx *e)
{
    const struct ir_node *self = ex_self(e);
    int nops = (int)self->ninputs;
    if (nops > EIN_MAX_OPS) ex_fatal(e, "Einsum: %d operands (at most %d supported)", nops, EIN_MAX_OPS);
    const char *eq0 = ex_attr_string(e, "equation", NULL);
    if (!eq0) ex_fatal(e, "Einsum: missing attribute 'equation'");
    char *eq = ir_alloc(e->g, strlen(eq0) + 1);
    size_t len = 0;
    for (const char *s = eq0; *s; s++)
        if (*s != ' ' && *s != '\t') eq[len++] = *s;
    eq[len] = 0;
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : len;

    struct ein_op ops[EIN_MAX_OPS];
    enum ir_dtype t = IR_UNDEFINED;
    /* term boundaries */
    const char *tb[EIN_MAX_OPS + 1];
    size_t tl[EIN_MAX_OPS + 1];
    int nterms = 0;
    for (size_t i = 0, st = 0; i <= lhs_len; i++) {
        if (i == lhs_len || eq[i] == ',') {
            if (nterms == EIN_MAX_OPS + 1) ex_fatal(e, "Einsum: too many terms in '%s'", eq0);
            tb[nterms] = eq + st, tl[nterms++] = i - st;
            st = i + 1;
        }
    }
    if (nterms != nops)
        ex_fatal(e, "Einsum: equation '%s' has %d input terms but the node has %d inputs", eq0, nterms,
                 nops);
    int E = 0;
    for (int k = 0; k < nops; k++) {
        const struct ir_value *x = ex_v(e, ex_in(e, k));
        if (k == 0) t = x->dtype;
        if (x->dtype != t)
            ex_fatal(e, "Einsum: inputs differ in dtype (%s, %s)", ir_dtype_name(t), ir_dtype_name(x->dtype));
        int nlet = 0;
        for (size_t i = 0; i < tl[k]; i++) nlet += tb[k][i] != '.';
        if (x->rank - nlet > E) E = x->rank - nlet;
    }
    if (!(ref_is_float(t) || ref_is_int(t)))
        ex_fatal(e, "Einsum: inputs of dtype %s are not supported", ir_dtype_name(t));
    int count[256] = {0};
    for (int k = 0; k < nops; k++) {
        struct ein_op *o = &ops[k];
        o->v = ex_in(e, k);
        ein_sync(e, o);
        bool he;
        int n = parse_term(e, tb[k], tl[k], o->rank, E, o->lab, &he);
        IR_ASSERT(n == o->rank);
        for (int a = 0; a < n; a++) count[o->lab[a] & 255]++;
    }
    int out[IR_MAX_RANK], nout = 0;
    if (arrow) {
        bool he;
        const char *rhs = arrow + 2;
        for (size_t i = 0; rhs[i]; i++)
            if (rhs[i] == '-' || rhs[i] == '>' || rhs[i] == ',')
                ex_fatal(e, "Einsum: output term '%s' is malformed", rhs);
        nout = parse_term(e, rhs, strlen(rhs), -1, E, out, &he);
        if (!he && E > 0)
            ex_fatal(e, "Einsum: equation '%s' has ellipsis dims in its inputs but no '...' in its output",
                     eq0);
        for (int k = 0; k < nout; k++) {
            if (out[k] < ELL_LABEL && !count[out[k]])
                ex_fatal(e, "Einsum: output letter '%c' of '%s' is in no input term", out[k], eq0);
            if (find_lab(out, k, out[k]) >= 0)
                ex_fatal(e, "Einsum: output letter '%c' of '%s' is repeated", out[k], eq0);
        }
    } else {
        for (int j = 0; j < E; j++) out[nout++] = ELL_LABEL + j;
        for (int c = 'A'; c <= 'z'; c++)
            if (count[c] == 1) {
                if (nout == IR_MAX_RANK) ex_fatal(e, "Einsum: output of '%s' has too many axes", eq0);
                out[nout++] = c;
            }
    }

    /* label sizes (size-1 broadcasts) */
    int64_t lsize[256];
    for (int c = 0; c < 256; c++) lsize[c] = -1;
    for (int k = 0; k < nops; k++)
        for (int a = 0; a < ops[k].rank; a++) {
            int l = ops[k].lab[a];
            int64_t d = ops[k].dim[a];
            if (lsize[l] < 0 || lsize[l] == 1) lsize[l] = d;
            else if (d != 1 && d != lsize[l])
                ex_fatal(e, "Einsum: axis '%c' of '%s' has sizes %lld and %lld", l < ELL_LABEL ? l : '.',
                         eq0, (long long)lsize[l], (long long)d);
        }

    /* steps 1-2 */
    for (int k = 0; k < nops; k++) {
        struct ein_op *o = &ops[k];
        ein_diagonals(e, o);
        int64_t axes[IR_MAX_RANK];
        int na = 0, lab[IR_MAX_RANK], r = 0;
        for (int a = 0; a < o->rank; a++) {
            int l = o->lab[a];
            bool elsewhere = find_lab(out, nout, l) >= 0;
            for (int j = 0; j < nops && !elsewhere; j++)
                if (j != k) elsewhere = find_lab(ops[j].lab, ops[j].rank, l) >= 0;
            if (elsewhere) lab[r++] = l;
            else axes[na++] = a;
        }
        if (na) {
            o->v = ex_reduce(e, IR_OP_REDUCE_SUM, o->v, na, axes, false);
            for (int a = 0; a < r; a++) o->lab[a] = lab[a];
            ein_sync(e, o);
        }
    }

    if (nops == 2 && t == IR_F32) {
        uint32_t y = ein_matmul(e, &ops[0], &ops[1], out, nout);
        if (y != IR_NONE) {
            ex_output(e, 0, y);
            return;
        }
    }
    /* general path: common order = output letters, then summed letters */
    int order[IR_MAX_RANK], n = nout;
    for (int k = 0; k < nout; k++) order[k] = out[k];
    for (int k = 0; k < nops; k++)
        for (int a = 0; a < ops[k].rank; a++)
            if (find_lab(order, n, ops[k].lab[a]) < 0) {
                if (n == IR_MAX_RANK) ex_fatal(e, "Einsum: '%s' has too many distinct letters", eq0);
                order[n++] = ops[k].lab[a];
            }
    uint32_t y = IR_NONE;
    for (int k = 0; k < nops; k++) {
        uint32_t v = ein_align(e, &ops[k], order, n, true);
        y = y == IR_NONE ? v : ex_op2(e, IR_OP_MUL, y, v);
    }
    if (n > nout) {
        int64_t axes[IR_MAX_RANK];
        for (int k = nout; k < n; k++) axes[k - nout] = k;
        y = ex_reduce(e, IR_OP_REDUCE_SUM, y, n - nout, axes, false);
    }
    /* output labels no operand reached at full size stay broadcast (size 1): expand them */
    const struct ir_value *yv = ex_v(e, y);
    bool need_expand = false;
    int64_t od[IR_MAX_RANK];
    for (int k = 0; k < nout; k++) {
        od[k] = lsize[out[k]] < 0 ? 1 : lsize[out[k]];
        need_expand |= yv->dims[k] != od[k];
    }
    if (need_expand) y = ex_op2(e, IR_OP_EXPAND, y, ex_ints(e, nout, od));
    ex_output(e, 0, y);
}
