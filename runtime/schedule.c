/* schedule.c — the runtime half of the kernel-variant seam: which class of kernels runs on
 * this device (docs/kernel_variants.md).
 *
 * What: device facts (o2r_ctx_device_info), the kernel class of a context (o2r_ctx_set_kernels,
 * o2r_ctx_kernel_class; $ONNX2CL_KERNELS), launch selection and program-source assembly for a
 * model (o2r_launch_selected, o2r_schedule_source).
 * Assumes: a generated descriptor tags each launch and each source segment with the classes it
 * belongs to (O2R_VARIANT_* bits, 0 = all); the compiler emitted, for every launch of one class,
 * launches of the other class computing the same values (codegen/lower.h: cg_variant).
 * Guarantees: this file is the ONE place where a device's properties decide which variant
 * runs (and whether weights are mapped rather than copied: o2r_ctx_memory_is_host); nothing
 * else in the runtime or in generated code tests the device type. A bad $ONNX2CL_KERNELS or
 * mode string is an error naming it, never a silent default.
 */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* Reads a string device property into dst (always NUL-terminated). */
static void dev_str(cl_device_id d, cl_device_info what, char *dst, size_t cap)
{
    dst[0] = 0;
    if (clGetDeviceInfo(d, what, cap - 1, dst, NULL) != CL_SUCCESS)
        dst[0] = 0;
    dst[cap - 1] = 0;
}

/* Reads a numeric device property of `size` bytes into *dst (zero on failure). */
static void dev_num(cl_device_id d, cl_device_info what, void *dst, size_t size)
{
    memset(dst, 0, size);
    if (clGetDeviceInfo(d, what, size, dst, NULL) != CL_SUCCESS)
        memset(dst, 0, size);
}

void o2r_query_device_info(cl_platform_id p, cl_device_id d, struct o2r_device_info *info)
{
    memset(info, 0, sizeof *info);
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof info->platform - 1, info->platform,
                          NULL) != CL_SUCCESS)
        info->platform[0] = 0;
    dev_str(d, CL_DEVICE_NAME, info->name, sizeof info->name);
    dev_str(d, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    dev_str(d, CL_DEVICE_VERSION, info->version, sizeof info->version);
    dev_str(d, CL_DRIVER_VERSION, info->driver, sizeof info->driver);
    dev_str(d, CL_DEVICE_OPENCL_C_VERSION, info->c_version, sizeof info->c_version);
    cl_device_type t;
    cl_uint u;
    cl_ulong ul;
    size_t sz;
    cl_device_local_mem_type lt;
    cl_device_fp_config fp;
    dev_num(d, CL_DEVICE_TYPE, &t, sizeof t);
    info->type = (uint64_t)t;
    dev_num(d, CL_DEVICE_MAX_COMPUTE_UNITS, &u, sizeof u);
    info->compute_units = u;
    dev_num(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, &u, sizeof u);
    info->max_clock_mhz = u;
    dev_num(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, &sz, sizeof sz);
    info->max_wg_size = sz;
    dev_num(d, CL_DEVICE_LOCAL_MEM_SIZE, &ul, sizeof ul);
    info->local_mem = ul;
    dev_num(d, CL_DEVICE_LOCAL_MEM_TYPE, &lt, sizeof lt);
    info->local_mem_dedicated = lt == CL_LOCAL;
    dev_num(d, CL_DEVICE_GLOBAL_MEM_SIZE, &ul, sizeof ul);
    info->global_mem = ul;
    dev_num(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &ul, sizeof ul);
    info->max_alloc = ul;
    dev_num(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, &u, sizeof u);
    info->pref_vec_float = u;
    dev_num(d, CL_DEVICE_DOUBLE_FP_CONFIG, &fp, sizeof fp);
    info->fp64 = fp != 0;
}

/* Parses a kernel-class mode; 0 = auto, -1 = not a mode. */
static int parse_mode(const char *s)
{
    if (strcmp(s, "auto") == 0)
        return 0;
    if (strcmp(s, "cpu") == 0)
        return (int)O2R_VARIANT_CPU;
    if (strcmp(s, "gpu") == 0)
        return (int)O2R_VARIANT_GPU;
    return -1;
}

/* The automatic choice: GPU variants for GPUs and accelerators, CPU variants otherwise. */
static void choose_auto(struct o2r_ctx *ctx)
{
    uint64_t t = ctx->info.type;
    if (t & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) {
        ctx->kclass = O2R_VARIANT_GPU;
        snprintf(ctx->kclass_why, sizeof ctx->kclass_why, "auto: %s",
                 t & CL_DEVICE_TYPE_GPU ? "CL_DEVICE_TYPE_GPU" : "CL_DEVICE_TYPE_ACCELERATOR");
    } else {
        ctx->kclass = O2R_VARIANT_CPU;
        snprintf(ctx->kclass_why, sizeof ctx->kclass_why, "auto: %s",
                 t & CL_DEVICE_TYPE_CPU ? "CL_DEVICE_TYPE_CPU" : "device type is not a GPU");
    }
}

/* Applies mode string s (from `src`, for messages) to ctx. */
static o2r_status apply_mode(struct o2r_ctx *ctx, const char *s, const char *src)
{
    int m = parse_mode(s);
    if (m < 0) {
        o2r_set_error(ctx, "%s='%s': the kernel variants must be cpu, gpu or auto", src, s);
        return O2R_ERR_ARG;
    }
    if (m == 0) {
        choose_auto(ctx);
        return O2R_OK;
    }
    ctx->kclass = (uint32_t)m;
    snprintf(ctx->kclass_why, sizeof ctx->kclass_why, "%s=%s", src, s);
    return O2R_OK;
}

o2r_status o2r_schedule_init_ctx(struct o2r_ctx *ctx)
{
    o2r_query_device_info(ctx->platform, ctx->device, &ctx->info);
    return o2r_ctx_set_kernels(ctx, NULL);
}

o2r_status o2r_ctx_set_kernels(struct o2r_ctx *ctx, const char *mode)
{
    if (!ctx)
        return O2R_ERR_ARG;
    if (mode)
        return apply_mode(ctx, mode, "--kernels");
    const char *env = getenv("ONNX2CL_KERNELS");
    if (env && *env)
        return apply_mode(ctx, env, "$ONNX2CL_KERNELS");
    choose_auto(ctx);
    return O2R_OK;
}

uint32_t o2r_ctx_kernel_class(const struct o2r_ctx *ctx, const char **why)
{
    if (why)
        *why = ctx ? ctx->kclass_why : "";
    return ctx ? ctx->kclass : O2R_VARIANT_CPU;
}

o2r_status o2r_ctx_device_info(const struct o2r_ctx *ctx, struct o2r_device_info *info)
{
    if (!ctx || !info)
        return O2R_ERR_ARG;
    *info = ctx->info;
    return O2R_OK;
}

int o2r_ctx_memory_is_host(const struct o2r_ctx *ctx)
{
    cl_bool unified = CL_FALSE;
    return (ctx->info.type & CL_DEVICE_TYPE_CPU) &&
           clGetDeviceInfo(ctx->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified,
                           NULL) == CL_SUCCESS && unified == CL_TRUE;
}

int o2r_launch_selected(const struct o2r_launch *l, uint32_t kclass)
{
    return l->variants == 0 || (l->variants & kclass) != 0;
}

o2r_status o2r_schedule_source(struct o2r_model *m)
{
    const struct o2r_model_desc *d = m->desc;
    size_t len = 0;
    if (d->n_sources == 0) { /* a descriptor without segments: one source for every class */
        len = d->kernel_source_len ? (size_t)d->kernel_source_len : strlen(d->kernel_source);
        m->source = o2r_malloc(len + 1);
        if (!m->source)
            goto nomem;
        memcpy(m->source, d->kernel_source, len);
    } else {
        for (uint32_t i = 0; i < d->n_sources; i++)
            if (d->sources[i].variants == 0 || (d->sources[i].variants & m->kclass))
                len += (size_t)d->sources[i].len;
        m->source = o2r_malloc(len + 1);
        if (!m->source)
            goto nomem;
        size_t pos = 0;
        for (uint32_t i = 0; i < d->n_sources; i++)
            if (d->sources[i].variants == 0 || (d->sources[i].variants & m->kclass)) {
                memcpy(m->source + pos, d->sources[i].text, (size_t)d->sources[i].len);
                pos += (size_t)d->sources[i].len;
            }
    }
    m->source[len] = 0;
    m->source_len = len;
    /* the tunable kernel instances with their chosen tiles (tune.c) */
    size_t tl = 0;
    char *tsrc = o2r_tune_source(m, &tl);
    if (tl == (size_t)-1)
        goto nomem;
    if (tsrc && tl) {
        char *p = o2r_malloc(len + tl + 1);
        if (!p) {
            o2r_free(tsrc);
            goto nomem;
        }
        memcpy(p, m->source, len);
        memcpy(p + len, tsrc, tl + 1);
        o2r_free(m->source);
        m->source = p;
        m->source_len = len + tl;
    }
    o2r_free(tsrc);
    return O2R_OK;
nomem:
    o2r_set_error(m->ctx, "out of host memory assembling the program source of model '%s'",
                  d->name);
    return O2R_ERR_NOMEM;
}

void o2r_model_print_variants(const struct o2r_model *m, void *fp)
{
    FILE *f = fp ? fp : stderr;
    if (!m)
        return;
    const struct o2r_model_desc *d = m->desc;
    const char *cls = m->kclass == O2R_VARIANT_GPU ? "gpu" : "cpu";
    uint32_t shared = 0, own = 0, other = 0;
    for (uint32_t i = 0; i < d->n_launches; i++) {
        uint32_t v = d->launches[i].variants;
        if (v == 0 || v == O2R_VARIANT_ALL)
            shared++;
        else if (v & m->kclass)
            own++;
        else
            other++;
    }
    fprintf(f, "kernels: %s variants (%s); %u launches run: %u %s-specific + %u shared by every "
            "class (%u launches of other classes not used)\n", cls, m->ctx->kclass_why,
            (unsigned)(own + shared), (unsigned)own, cls, (unsigned)shared, (unsigned)other);
    /* per op kind: the class-specific kernels chosen (first distinct names) */
    for (uint32_t i = 0; i < d->n_launches; i++) {
        const struct o2r_launch *l = &d->launches[i];
        if (l->variants == 0 || l->variants == O2R_VARIANT_ALL || !(l->variants & m->kclass))
            continue;
        const char *op = l->op ? l->op : "?";
        int seen = 0;
        for (uint32_t j = 0; j < i && !seen; j++) {
            const struct o2r_launch *o = &d->launches[j];
            seen = o->variants == l->variants && o->op && strcmp(o->op, op) == 0;
        }
        if (seen)
            continue;
        uint32_t count = 0;
        fprintf(f, "  %-20s %s variant:", op, cls);
        for (uint32_t j = i; j < d->n_launches; j++) {
            const struct o2r_launch *o = &m->launches[j]; /* tunable: the chosen instance */
            if (o->variants != l->variants || !o->op || strcmp(o->op, op) != 0)
                continue;
            count++;
            int dup = 0;
            for (uint32_t k = i; k < j && !dup; k++)
                dup = m->launches[k].variants == l->variants && m->launches[k].op &&
                      strcmp(m->launches[k].op, op) == 0 &&
                      strcmp(m->launches[k].kernel, o->kernel) == 0;
            if (!dup)
                fprintf(f, " %s", o->kernel);
        }
        fprintf(f, " (%u launches)\n", (unsigned)count);
    }
}

int o2r_probe_build(cl_platform_id p, cl_device_id d, const char *src)
{
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
    cl_context c = clCreateContext(props, 1, &d, NULL, NULL, &e);
    if (e != CL_SUCCESS || !c)
        return 0;
    size_t len = strlen(src);
    cl_program prog = clCreateProgramWithSource(c, 1, &src, &len, &e);
    int ok = 0;
    if (e == CL_SUCCESS && prog) {
        ok = clBuildProgram(prog, 1, &d, "-cl-std=CL1.2", NULL, NULL) == CL_SUCCESS;
        if (ok) { /* a kernel object must come out of it too */
            cl_kernel k = clCreateKernel(prog, "probe", &e);
            ok = e == CL_SUCCESS && k;
            if (k)
                clReleaseKernel(k);
        }
        clReleaseProgram(prog);
    }
    clReleaseContext(c);
    return ok;
}
