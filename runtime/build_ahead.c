/* build_ahead.c — compiles a model's kernels ahead of its first run where the OpenCL
 * implementation compiles lazily (PoCL; issue 24 item 2).
 *
 * What: PoCL builds a program's kernels to machine code at the first launch of each (kernel,
 * local size, specialization) and caches the result on disk: on a cold cache the first run of
 * a UNet spends most of its time in these compiles, one after the other, each one only when the
 * in-order queue reaches its launch, so the compute of launch i and the compile of launch i+1
 * never overlap. At the end of o2r_model_init, o2r_build_ahead_start enqueues ONE small launch
 * per distinct kernel specialization the model runs, in launch order, on a second in-order
 * queue, and returns: PoCL's worker threads compile them in the background while the caller
 * reads its inputs, initializes other models and runs the first launches, which then find their
 * kernels built.
 * Where the compile happens (PoCL 3.1, lib/CL/devices/pthread/pthread_scheduler.c,
 * common.c): pocl_pthread_prepare_kernel -> pocl_check_kernel_dlhandle_cache, when a worker
 * thread takes the command, under the process-wide pocl_dlhandle_lock and
 * pocl_llvm_codegen_lock. So the compiles of one process run one at a time whatever the number
 * of queues or host threads: this file uses one extra queue, no host threads; compiling on
 * several cores would need several processes.
 * What PoCL specializes on (pocl_cache.c pocl_cache_kernel_cachedir_path): the local size, a
 * zero global offset, and "smallgrid" (the widest dimension, local_size[d] * num_groups[d] for
 * d = 0, 1 and local_size[2]^2 in 3.1, below USHRT_MAX = 65535). The warm-up launch of a
 * launch keeps its local size and work_dim, no offset, and one work-group per dimension, except
 * that a dimension of 65535 or more work-items keeps the smallest multiple of its local size
 * that is >= 65535 (so the grid stays "large": at most a few thousand groups). A launch without
 * a local size (lws all 0: PoCL chooses) cannot be matched by a smaller grid: on PoCL its local
 * size is fixed here, for the warm-up AND the real runs: powers of two (ls_canonical, below), so
 * that launches and image sizes share PoCL's compiled specializations ($ONNX2CL_LOCAL_SIZE=pocl:
 * the one PoCL's own chooser, pocl_default_local_size_optimizer of lib/CL/devices/pocl_local_size.c,
 * MIT licence, ported below, picks from the device's limits); such kernels never depend on the
 * local size (the driver was free to choose it), so results do not change, and a warm-up enqueue
 * that fails with it gives the launch back to the driver's choice.
 * Arguments: weights buffers are the model's own (read only); every activation argument is one
 * zero-filled scratch buffer as large as the largest activation the warmed launches use (never
 * the model's arena: the warm-up runs while the real run uses it). A warm-up launch computes
 * garbage from zeros and its own outputs, which is safe because the generated kernels stay
 * inside their buffers for any values (indices are clamped, integer division by zero gives 0:
 * kernels/gather.cl, kernels/binary.cl) and it covers at most the grid of its real launch.
 * The scratch buffer and the queue are released by o2r_model_free after waiting for the
 * warm-ups (a model freed right after init waits for its compiles).
 * Switch: $ONNX2CL_BUILD_AHEAD=auto (default: on for a CPU device of PoCL, where it pays; off
 * elsewhere: GPU drivers build every kernel in clBuildProgram, the warm-up would only cost),
 * on|1 (any platform; launches without a local size are then not warmed), off|0; another
 * value: O2R_ERR_ARG from o2r_model_init. Tuning runs (o2r_model_tune) never build ahead.
 * Progress: when the first warm-up launch is still being compiled 100 ms after PoCL submitted
 * it (CL_SUBMITTED -> CL_RUNNING is PoCL's compile; a cached kernel takes about a millisecond,
 * a cold one 0.1 s to seconds), one line on stderr: "onnx2cl: model 'M':
 * building its N kernels ahead of the first run, in the background, one at a time ...".
 * Guarantees: best effort: a failed warm-up step stops the warm-up, never fails the init or
 * changes what the run computes; the CL calls here do not count for $ONNX2CL_FAIL_CL and no
 * host memory is allocated (no $ONNX2CL_FAIL_ALLOC shift).
 */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define AHEAD_SMALLGRID 65535u /* PoCL's grid_width_specialization_limit (USHRT_MAX) */
#define AHEAD_POLL_MS 100.0    /* longer than a cached kernel's first launch */
#define AHEAD_FILL_MS 5000.0   /* longest wait for the scratch fill before it (then: no line) */

/* 1 when the context's platform is PoCL. */
static int is_pocl(const struct o2r_ctx *ctx)
{
    return strncmp(ctx->device_name, "Portable Computing Language", 27) == 0;
}

o2r_status o2r_build_ahead_mode(struct o2r_ctx *ctx, int *on)
{
    const char *s = getenv("ONNX2CL_BUILD_AHEAD");
    *on = 0;
    if (!s || !*s || strcmp(s, "auto") == 0) {
        *on = is_pocl(ctx) && (ctx->info.type & CL_DEVICE_TYPE_CPU) != 0;
        return O2R_OK;
    }
    if (strcmp(s, "on") == 0 || strcmp(s, "1") == 0) {
        *on = 1;
        return O2R_OK;
    }
    if (strcmp(s, "off") == 0 || strcmp(s, "0") == 0)
        return O2R_OK;
    o2r_set_error(ctx, "$ONNX2CL_BUILD_AHEAD=%s: expected auto, on, off, 1 or 0", s);
    return O2R_ERR_ARG;
}

/* ---- PoCL 3.1's pocl_default_local_size_optimizer (lib/CL/devices/pocl_local_size.c,
 * Copyright (c) 2011-2019 pocl developers, MIT licence), the same steps on the same device
 * limits, so that a launch without a local size gets the one PoCL would choose. */
static size_t ls_gcd(size_t a, size_t b)
{
    while (a) {
        size_t c = a;
        a = b % a;
        b = c;
    }
    return b;
}
/* the largest divisor of dividend that is <= limit */
static size_t ls_upper_divisor(size_t dividend, size_t limit)
{
    if (dividend < limit)
        return dividend;
    if (limit == 0)
        return 1;
    while (dividend % limit != 0)
        --limit;
    return limit;
}
static int ls_chain(size_t a, size_t b, size_t c)
{
    return a && b && b % a == 0 && c % b == 0;
}
struct ls_dev {
    size_t max_item[3], max_group, pref_multiple;
    cl_uint ncus;
};
static void ls_choose(const struct ls_dev *dev, const size_t g[3], size_t l[3])
{
    size_t ml[3], grain[3];
    size_t pref = dev->pref_multiple ? dev->pref_multiple : 1;
    for (int d = 0; d < 3; d++) {
        ml[d] = dev->max_item[d] < g[d] ? dev->max_item[d] : g[d];
        grain[d] = ls_gcd(pref, g[d]);
    }
    l[0] = ls_upper_divisor(g[0] / grain[0], ml[0] / grain[0]) * grain[0];
    for (int d = 1; d < 3; d++)
        l[d] = ml[d] > 1 ? ls_upper_divisor(g[d] / grain[d], ml[d] / grain[d]) * grain[d] : 1;
    while (l[0] * l[1] * l[2] > dev->max_group) {
        int done = 0;
        /* halve z, then y, then x while the half stays a multiple of the grain dividing g */
        for (int d = 2; d >= 0 && !done; d--)
            if ((l[d] & 1) == 0 && ls_chain(grain[d], l[d] / 2, g[d])) {
                l[d] /= 2;
                done = 1;
            }
        if (done)
            continue;
        /* the coordinate with the least grain to 1: z, y, x order as PoCL's TRY_LEAST_GRAIN */
        static const int order[3][3] = {{2, 0, 1}, {1, 2, 0}, {0, 1, 2}};
        for (int k = 0; k < 3 && !done; k++) {
            int c1 = order[k][0], c2 = order[k][1], c3 = order[k][2];
            if (l[c1] > 1 && grain[c1] <= grain[c2] && grain[c1] <= grain[c3]) {
                l[c1] = 1;
                done = 1;
            }
        }
        if (done)
            continue;
        for (int d = 2; d >= 0 && !done; d--)
            if (l[d] > 1) {
                l[d] = 1;
                done = 1;
            }
        if (!done)
            break; /* 1x1x1 > max_group: cannot happen */
    }
    const size_t min_group = 4 * pref < dev->max_group ? 4 * pref : dev->max_group;
    size_t nwg[3] = {g[0] / l[0], g[1] / l[1], g[2] / l[2]};
    size_t splits;
    while ((splits = dev->ncus / (nwg[0] * nwg[1] * nwg[2])) > 1 &&
           l[0] * l[1] * l[2] >= splits * min_group) {
        while (splits > 1) {
            int d;
            for (d = 2; d >= 0; d--)
                if (l[d] % splits == 0 && ls_chain(grain[d], l[d] / splits, g[d]))
                    break;
            if (d >= 0) {
                l[d] /= splits;
                nwg[d] *= splits;
                splits = 0;
                break;
            }
            splits--;
        }
        if (splits == 0)
            continue;
        /* TRY_LEAST_DIM (z, x, y), (y, z, x), (x, y, z) */
        static const int order[3][3] = {{2, 0, 1}, {1, 2, 0}, {0, 1, 2}};
        int k;
        for (k = 0; k < 3; k++) {
            int c1 = order[k][0], c2 = order[k][1], c3 = order[k][2];
            if (l[c1] > 1 && l[c1] <= l[c2] && l[c1] <= l[c3] && l[c2] * l[c3] >= min_group) {
                l[c1] = 1;
                nwg[c1] = g[c1];
                break;
            }
        }
        if (k == 3)
            break;
    }
}

/* The local size onnx2cl picks on PoCL for a launch without one (issue 24 items 1 and 3): per
 * dimension, x first, the largest power of two dividing the global size, within the device's
 * limits and at most 4096 items for a 1-D grid (PoCL's own chooser fills up to its 4096 too), 64 x 4
 * x 1 for 2-D and 3-D ones; then halved, largest dimension first, until the grid has a group per
 * compute unit where it can. PoCL compiles a kernel once per local size: its own chooser
 * (ls_choose) takes the largest divisors (12, 18, 5 ... as the sizes come), so one kernel of a UNet
 * was compiled in up to 21 local sizes and another image size shared almost none of them; powers of
 * two repeat across launches and image sizes (latents are multiples of 8). $ONNX2CL_LOCAL_SIZE=pocl
 * keeps PoCL's choice (the measurement baseline). */
#define LS_CANON_ITEMS 4096u
static void ls_canonical(const struct ls_dev *dev, const size_t g[3], size_t l[3])
{
    /* 1-D grids (elementwise, copies: long) up to 4096 items; 2-D and 3-D grids at most 64 x 4 x 1
     * (their dims vary from layer to layer: small caps are met by most of them, so one local size) */
    const size_t cap[3] = {g[1] > 1 || g[2] > 1 ? 64 : LS_CANON_ITEMS, 4, 1};
    size_t total = 1;
    for (int d = 0; d < 3; d++) {
        l[d] = 1;
        while (g[d] % (2 * l[d]) == 0 && 2 * l[d] <= cap[d] && 2 * l[d] <= dev->max_item[d] &&
               2 * total <= dev->max_group)
            l[d] *= 2, total *= 2;
    }
    for (;;) {
        const size_t groups = g[0] / l[0] * (g[1] / l[1]) * (g[2] / l[2]);
        if (groups >= dev->ncus) break;
        int big = l[0] >= l[1] && l[0] >= l[2] ? 0 : l[1] >= l[2] ? 1 : 2;
        if (l[big] == 1) break;
        l[big] /= 2;
    }
}

static int ls_pocl_env(void)
{
    const char *e = getenv("ONNX2CL_LOCAL_SIZE");
    return e && strcmp(e, "pocl") == 0;
}

/* Device limits for ls_choose; 0 when a query fails. */
static int ls_query(const struct o2r_ctx *ctx, cl_kernel k, struct ls_dev *dev)
{
    size_t items[3] = {0, 0, 0};
    memset(dev, 0, sizeof *dev);
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL) !=
            CL_SUCCESS ||
        clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof dev->max_group,
                        &dev->max_group, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof dev->ncus, &dev->ncus,
                        NULL) != CL_SUCCESS ||
        clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                 sizeof dev->pref_multiple, &dev->pref_multiple,
                                 NULL) != CL_SUCCESS)
        return 0;
    memcpy(dev->max_item, items, sizeof items);
    return dev->max_group > 0 && items[0] > 0 && items[1] > 0 && items[2] > 0;
}

/* The warm-up geometry of launch l (lws as it will run, nonzero): work_dim and lws as l, one
 * group per dimension except the "large" ones (see the banner). 0 when l is not warmed. */
static int warm_geometry(const struct o2r_launch *l, size_t gws[3], size_t lws[3])
{
    int set = 0;
    for (int d = 0; d < 3; d++) {
        gws[d] = lws[d] = 1;
        if ((uint32_t)d >= l->work_dim)
            continue;
        if (l->gws[d] == 0)
            return 0;
        set |= l->lws[d] != 0;
    }
    if (!set || l->check || !l->kernel)
        return 0;
    for (uint32_t d = 0; d < l->work_dim; d++) {
        size_t g = (size_t)l->gws[d], w = (size_t)l->lws[d];
        if (w == 0 || g % w != 0)
            return 0;
        lws[d] = w;
        gws[d] = g >= AHEAD_SMALLGRID ? (AHEAD_SMALLGRID + w - 1) / w * w : w;
    }
    return 1;
}

/* 1 when launch j (< i) already warms what launch i would. */
static int warmed_before(const struct o2r_model *m, uint32_t i, const size_t gws[3],
                         const size_t lws[3])
{
    const struct o2r_model_desc *d = m->desc;
    for (uint32_t j = 0; j < i; j++) {
        size_t g2[3], l2[3];
        if (!o2r_launch_selected(&d->launches[j], m->kclass) || d->launches[j].check ||
            m->launch_kernel[j] != m->launch_kernel[i] ||
            m->launches[j].work_dim != m->launches[i].work_dim ||
            !warm_geometry(&m->launches[j], g2, l2))
            continue;
        if (memcmp(g2, gws, sizeof g2) == 0 && memcmp(l2, lws, sizeof l2) == 0)
            return 1;
    }
    return 0;
}

/* Sets launch l's arguments on k: weights buffers as the model's, arena buffers -> scratch. */
static cl_int warm_args(const struct o2r_model *m, const struct o2r_launch *l, cl_kernel k,
                        cl_mem scratch)
{
    for (uint32_t j = 0; j < l->nargs; j++) {
        const struct o2r_arg *a = &m->args[l->first_arg + j];
        const cl_mem b = a->kind != O2R_ARG_BUF ? NULL
                         : m->desc->buffers[a->u.buf].space == O2R_SPACE_WEIGHTS ? m->bufs[a->u.buf] : scratch;
        cl_int e = o2r_set_kernel_arg(k, j, a, b);
        if (e != CL_SUCCESS)
            return e;
    }
    return CL_SUCCESS;
}

/* Launches without a local size get ls_canonical's (PoCL only; $ONNX2CL_LOCAL_SIZE=pocl: PoCL's own
 * choice, ls_choose), whether or not the model builds ahead, so that the kernels compiled do not
 * depend on $ONNX2CL_BUILD_AHEAD. */
void o2r_local_sizes(struct o2r_model *m)
{
    struct o2r_ctx *ctx = m->ctx;
    const struct o2r_model_desc *d = m->desc;
    const int pocl = is_pocl(ctx);
    struct ls_dev dev;
    int have_dev = 0;
    const int pocl_choice = ls_pocl_env();
    for (uint32_t i = 0; pocl && i < d->n_launches; i++) {
        struct o2r_launch *l = &m->launches[i];
        if (!o2r_launch_selected(&d->launches[i], m->kclass) || l->check || l->work_dim < 1 ||
            l->work_dim > 3 || l->lws[0] || l->lws[1] || l->lws[2])
            continue;
        size_t g[3] = {1, 1, 1}, w[3];
        int empty = 0;
        for (uint32_t q = 0; q < l->work_dim; q++) {
            g[q] = (size_t)l->gws[q];
            empty |= g[q] == 0;
        }
        if (empty)
            continue;
        if (!have_dev && !(have_dev = ls_query(ctx, m->kernels[m->launch_kernel[i]], &dev)))
            break;
        if (pocl_choice)
            ls_choose(&dev, g, w);
        else
            ls_canonical(&dev, g, w);
        if (w[0] * w[1] * w[2] == 0 || w[0] * w[1] * w[2] > dev.max_group || g[0] % w[0] ||
            g[1] % w[1] || g[2] % w[2])
            continue; /* cannot happen; the driver chooses */
        for (uint32_t q = 0; q < l->work_dim; q++)
            l->lws[q] = w[q];
    }
}

void o2r_build_ahead_start(struct o2r_model *m)
{
    struct o2r_ctx *ctx = m->ctx;
    const struct o2r_model_desc *d = m->desc;
    const int pocl = is_pocl(ctx);
    /* 1. the scratch buffer: the largest activation a warmed launch takes */
    uint64_t scratch_bytes = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->n_launches; i++) {
        size_t g[3], w[3];
        const struct o2r_launch *l = &m->launches[i];
        if (!o2r_launch_selected(&d->launches[i], m->kclass) || !warm_geometry(l, g, w))
            continue;
        for (uint32_t j = 0; j < l->nargs; j++) {
            const struct o2r_arg *a = &m->args[l->first_arg + j];
            if (a->kind == O2R_ARG_BUF && d->buffers[a->u.buf].space == O2R_SPACE_ARENA &&
                d->buffers[a->u.buf].size > scratch_bytes)
                scratch_bytes = d->buffers[a->u.buf].size;
        }
        n++;
    }
    if (!n)
        return;
    cl_int e;
    cl_mem scratch = NULL;
    m->ahead_queue = clCreateCommandQueue(ctx->context, ctx->device, 0, &e);
    if (e != CL_SUCCESS || !m->ahead_queue) {
        m->ahead_queue = NULL;
        return;
    }
    if (scratch_bytes) {
        scratch = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, (size_t)scratch_bytes, NULL, &e);
        const cl_uchar zero = 0;
        if (e != CL_SUCCESS || !scratch ||
            clEnqueueFillBuffer(m->ahead_queue, scratch, &zero, 1, 0, (size_t)scratch_bytes, 0,
                                NULL, NULL) != CL_SUCCESS) {
            if (scratch)
                clReleaseMemObject(scratch);
            return; /* the queue is released by o2r_model_free */
        }
    }
    /* 3. one warm-up per distinct (kernel, geometry), in launch order */
    cl_event first = NULL;
    const double t0 = o2r_now_ms();
    for (uint32_t i = 0; i < d->n_launches; i++) {
        size_t g[3], w[3];
        struct o2r_launch *l = &m->launches[i];
        if (!o2r_launch_selected(&d->launches[i], m->kclass) || !warm_geometry(l, g, w) ||
            warmed_before(m, i, g, w))
            continue;
        cl_kernel k = m->kernels[m->launch_kernel[i]];
        e = warm_args(m, l, k, scratch);
        if (e == CL_SUCCESS)
            e = clEnqueueNDRangeKernel(m->ahead_queue, k, l->work_dim, NULL, g, w, 0, NULL,
                                       first ? NULL : &first);
        if (e == CL_SUCCESS) {
            m->ahead_n++;
            continue;
        }
        /* a local size chosen in step 1 the driver refuses: give the launch (and the later
         * ones of the same shape) back to the driver's choice; anything else: stop here */
        if (d->launches[i].lws[0] || d->launches[i].lws[1] || d->launches[i].lws[2])
            break;
        for (uint32_t j = i; j < d->n_launches; j++)
            if (m->launch_kernel[j] == m->launch_kernel[i] &&
                memcmp(m->launches[j].lws, l->lws, sizeof l->lws) == 0 &&
                memcmp(m->launches[j].gws, l->gws, sizeof l->gws) == 0 &&
                !d->launches[j].lws[0] && !d->launches[j].lws[1] && !d->launches[j].lws[2] &&
                j != i)
                memset(m->launches[j].lws, 0, sizeof m->launches[j].lws);
        memset(l->lws, 0, sizeof l->lws);
    }
    if (scratch)
        clReleaseMemObject(scratch); /* the enqueued launches keep it until they are done */
    clFlush(m->ahead_queue);
    if (!first)
        return;
    /* PoCL marks a launch CL_SUBMITTED when its dependencies are done (here: the scratch fill),
     * compiles it when a worker thread takes it, then marks it CL_RUNNING: so the time from
     * SUBMITTED to RUNNING is the compile (about a millisecond for a cached kernel: dlopen) */
    cl_int status = CL_QUEUED;
    double t1 = 0.0;
    for (;;) {
        if (clGetEventInfo(first, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                           NULL) != CL_SUCCESS) {
            status = CL_COMPLETE; /* unknown: say nothing */
            break;
        }
        const double now = o2r_now_ms();
        if (status <= CL_RUNNING || (t1 > 0.0 && now - t1 >= AHEAD_POLL_MS) ||
            (t1 == 0.0 && now - t0 >= AHEAD_FILL_MS))
            break;
        if (status == CL_SUBMITTED && t1 == 0.0)
            t1 = now;
        o2r_sleep_ms(2);
    }
    clReleaseEvent(first);
    if (status == CL_SUBMITTED && t1 > 0.0)
        fprintf(stderr, "onnx2cl: model '%s': building its %u kernels ahead of the first run, in "
                "the background, one at a time (%s compiles each kernel at its first launch, "
                "under a process-wide lock; ONNX2CL_BUILD_AHEAD=off to skip)\n", d->name,
                (unsigned)m->ahead_n, pocl ? "PoCL" : "the platform");
}

void o2r_build_ahead_finish(struct o2r_model *m)
{
    if (!m->ahead_queue)
        return;
    clFinish(m->ahead_queue);
    clReleaseCommandQueue(m->ahead_queue);
    m->ahead_queue = NULL;
}

uint32_t o2r_model_ahead_count(const struct o2r_model *m)
{
    return m ? m->ahead_n : 0;
}
