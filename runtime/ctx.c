/* ctx.c — OpenCL platform/device selection, context and command queue (o2r_ctx_*).
 *
 * What: o2r_ctx_create chooses one device (spec / $ONNX2CL_DEVICE / index / name substring /
 * first GPU / first device), creates a context and one in-order command queue with profiling
 * enabled (the cost is negligible and it lets o2r_model_set_profiling work without a second
 * queue), and records device facts the rest of the runtime needs.
 * Assumes: an OpenCL ICD loader; devices of every type are considered.
 * Guarantees: on failure *out is NULL, everything created is released and the message is
 * available from o2r_ctx_last_error(NULL) (there is no context to hold it).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

static char g_create_err[O2R_ERR_CAP]; /* message of the last failed o2r_ctx_create */

/* One enumerated device. */
struct dev_entry {
    cl_platform_id platform; /* its platform */
    cl_device_id device;     /* the device */
    cl_device_type type;     /* CL_DEVICE_TYPE_* */
    char name[512];          /* "platform / device" */
};

/* What to install or set when no device is usable, in words (static text or buf). */
static const char *no_device_hint(char *buf, size_t cap, int have_platform)
{
    if (!have_platform)
        return " (the OpenCL ICD loader found no driver: install a GPU vendor's OpenCL driver, or "
               "PoCL for the CPU (Debian: apt-get install pocl-opencl-icd); drivers are listed in "
               "/etc/OpenCL/vendors/*.icd, or in the folder $OCL_ICD_VENDORS names)";
    /* PoCL offers no device when it cannot make its kernel cache folder (an unusable HOME):
     * try to make the folder it would use (it would create it itself) and name the failure. */
    const char *pocl = getenv("POCL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    const char *var = pocl && *pocl ? "POCL_CACHE_DIR" : xdg && *xdg ? "XDG_CACHE_HOME" : "HOME";
    char dir[1024], why[600];
    if (pocl && *pocl)
        snprintf(dir, sizeof dir, "%s", pocl);
    else if ((xdg && *xdg) || (home && *home))
        snprintf(dir, sizeof dir, "%s%s", xdg && *xdg ? xdg : home,
                 xdg && *xdg ? "/pocl" : "/.cache/pocl");
    else
        dir[0] = 0;
    if (!dir[0] || o2r_path_make_dirs(dir, why, sizeof why) != O2R_OK) {
        snprintf(buf, cap, " (if the driver is PoCL: it needs a writable cache folder and %s "
                 "gives %s%s%s; set POCL_CACHE_DIR, XDG_CACHE_HOME or HOME to a writable folder)",
                 var, dir[0] ? "'" : "none", dir, dir[0] ? "', which cannot be created" : "");
        return buf;
    }
    return " (a driver is installed but offers no device: check that the GPU is visible to this "
           "user (e.g. /dev/dri or /dev/nvidia* permissions), or install PoCL for the CPU)";
}

/* Case-insensitive substring test. */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* Enumerates every device of every platform into *out (o2r_malloc'ed). */
static o2r_status enum_devices(struct o2r_ctx *c, struct dev_entry **out, cl_uint *count)
{
    cl_uint np = 0, total = 0;
    cl_platform_id *plats = NULL;
    struct dev_entry *devs = NULL;
    o2r_status st = O2R_OK;
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    if (e == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (e == CL_SUCCESS && np == 0)) {
        char hint[512];
        o2r_set_error(c, "no OpenCL platform found%s", no_device_hint(hint, sizeof hint, 0));
        return O2R_ERR_NODEVICE;
    }
    if (e != CL_SUCCESS) {
        o2r_set_error(c, "clGetPlatformIDs: %s", o2r_cl_error_name(e));
        return O2R_ERR_CL;
    }
    plats = o2r_calloc(np, sizeof *plats);
    if (!plats) {
        o2r_set_error(c, "out of host memory enumerating OpenCL platforms");
        return O2R_ERR_NOMEM;
    }
    e = clGetPlatformIDs(np, plats, NULL);
    if (e != CL_SUCCESS) {
        o2r_set_error(c, "clGetPlatformIDs: %s", o2r_cl_error_name(e));
        st = O2R_ERR_CL;
        goto cleanup;
    }
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) == CL_SUCCESS)
            total += nd;
    }
    if (total == 0) {
        char hint[512];
        o2r_set_error(c, "no OpenCL device found on %u platform(s)%s", (unsigned)np,
                      no_device_hint(hint, sizeof hint, 1));
        st = O2R_ERR_NODEVICE;
        goto cleanup;
    }
    devs = o2r_calloc(total, sizeof *devs);
    if (!devs) {
        o2r_set_error(c, "out of host memory enumerating OpenCL devices");
        st = O2R_ERR_NOMEM;
        goto cleanup;
    }
    cl_uint k = 0;
    for (cl_uint p = 0; p < np && k < total; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        if (nd > total - k)
            nd = total - k;
        cl_device_id ids[64];
        if (nd > 64)
            nd = 64;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL) != CL_SUCCESS)
            continue;
        char pname[256] = "", dname[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        for (cl_uint d = 0; d < nd; d++) {
            struct dev_entry *de = &devs[k++];
            de->platform = plats[p];
            de->device = ids[d];
            dname[0] = 0;
            clGetDeviceInfo(ids[d], CL_DEVICE_NAME, sizeof dname - 1, dname, NULL);
            clGetDeviceInfo(ids[d], CL_DEVICE_TYPE, sizeof de->type, &de->type, NULL);
            snprintf(de->name, sizeof de->name, "%s / %s", pname, dname);
        }
    }
    *out = devs;
    *count = k;
    devs = NULL;
cleanup:
    o2r_free(devs);
    o2r_free(plats);
    return st;
}

/* Chooses the device index for spec (NULL/"" = first GPU else first device). -1 if none. */
static int choose_device(const struct dev_entry *devs, cl_uint n, const char *spec)
{
    if (!spec || !*spec) {
        for (cl_uint i = 0; i < n; i++)
            if (devs[i].type & CL_DEVICE_TYPE_GPU)
                return (int)i;
        return n ? 0 : -1;
    }
    int all_digits = 1;
    for (const char *s = spec; *s; s++)
        if (!isdigit((unsigned char)*s))
            all_digits = 0;
    if (all_digits) {
        unsigned long idx = strtoul(spec, NULL, 10);
        return idx < n ? (int)idx : -1;
    }
    for (cl_uint i = 0; i < n; i++) {
        char compact[512];
        /* also match "platform/device" without the spaces around the slash */
        const char *sl = strstr(devs[i].name, " / ");
        if (sl)
            snprintf(compact, sizeof compact, "%.*s/%s", (int)(sl - devs[i].name), devs[i].name,
                     sl + 3);
        else
            snprintf(compact, sizeof compact, "%s", devs[i].name);
        if (contains_ci(devs[i].name, spec) || contains_ci(compact, spec))
            return (int)i;
    }
    return -1;
}

o2r_status o2r_ctx_create(const char *device_spec, struct o2r_ctx **out)
{
    struct dev_entry *devs = NULL;
    cl_uint ndev = 0;
    o2r_status st;
    cl_int e;
    if (!out) {
        snprintf(g_create_err, sizeof g_create_err, "o2r_ctx_create: out is NULL");
        return O2R_ERR_ARG;
    }
    *out = NULL;
    struct o2r_ctx *c = o2r_calloc(1, sizeof *c);
    if (!c) {
        snprintf(g_create_err, sizeof g_create_err, "out of host memory creating the context");
        return O2R_ERR_NOMEM;
    }
    const char *spec = device_spec;
    const char *spec_src = "--device";
    if (!spec || !*spec) {
        spec = getenv("ONNX2CL_DEVICE");
        spec_src = "$ONNX2CL_DEVICE";
    }
    st = enum_devices(c, &devs, &ndev);
    if (st != O2R_OK)
        goto fail;
    int idx = choose_device(devs, ndev, spec);
    if (idx < 0) {
        size_t len = (size_t)snprintf(c->err, sizeof c->err,
                                      "no OpenCL device matches %s '%s'; available devices:",
                                      spec_src, spec ? spec : "");
        for (cl_uint i = 0; i < ndev && len < sizeof c->err; i++)
            len += (size_t)snprintf(c->err + len, sizeof c->err - len, "\n  %u: %s", (unsigned)i,
                                    devs[i].name);
        st = O2R_ERR_NODEVICE;
        goto fail;
    }
    c->platform = devs[idx].platform;
    c->device = devs[idx].device;
    snprintf(c->device_name, sizeof c->device_name, "%s", devs[idx].name);
    clGetDeviceInfo(c->device, CL_DEVICE_VERSION, sizeof c->device_version - 1, c->device_version,
                    NULL);
    clGetDeviceInfo(c->device, CL_DRIVER_VERSION, sizeof c->driver_version - 1, c->driver_version,
                    NULL);
    clGetPlatformInfo(c->platform, CL_PLATFORM_VERSION, sizeof c->platform_version - 1,
                      c->platform_version, NULL);
    e = clGetDeviceInfo(c->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof c->base_align_bits,
                        &c->base_align_bits, NULL);
    if (e != CL_SUCCESS) {
        o2r_set_error(c, "clGetDeviceInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN, %s): %s", c->device_name,
                      o2r_cl_error_name(e));
        st = O2R_ERR_CL;
        goto fail;
    }
    e = clGetDeviceInfo(c->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof c->max_alloc,
                        &c->max_alloc, NULL);
    if (e != CL_SUCCESS) {
        o2r_set_error(c, "clGetDeviceInfo(CL_DEVICE_MAX_MEM_ALLOC_SIZE, %s): %s", c->device_name,
                      o2r_cl_error_name(e));
        st = O2R_ERR_CL;
        goto fail;
    }
    st = o2r_schedule_init_ctx(c);
    if (st != O2R_OK)
        goto fail;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)c->platform, 0};
    e = o2r_fault_cl("clCreateContext");
    if (e == CL_SUCCESS)
        c->context = clCreateContext(props, 1, &c->device, NULL, NULL, &e);
    if (e != CL_SUCCESS || !c->context) {
        o2r_set_error(c, "clCreateContext(%s): %s", c->device_name, o2r_cl_error_name(e));
        c->context = NULL;
        st = O2R_ERR_CL;
        goto fail;
    }
    e = o2r_fault_cl("clCreateCommandQueue");
    if (e == CL_SUCCESS)
        c->queue = clCreateCommandQueue(c->context, c->device, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS || !c->queue) {
        o2r_set_error(c, "clCreateCommandQueue(%s): %s", c->device_name, o2r_cl_error_name(e));
        c->queue = NULL;
        st = O2R_ERR_CL;
        goto fail;
    }
    o2r_free(devs);
    c->err[0] = 0;
    *out = c;
    return O2R_OK;
fail:
    snprintf(g_create_err, sizeof g_create_err, "%s", c->err);
    o2r_free(devs);
    o2r_ctx_free(c);
    return st;
}

void o2r_ctx_free(struct o2r_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->queue)
        clReleaseCommandQueue(ctx->queue);
    if (ctx->context)
        clReleaseContext(ctx->context);
    o2r_free(ctx);
}

const char *o2r_ctx_device_name(const struct o2r_ctx *ctx)
{
    return ctx ? ctx->device_name : "";
}

/* Message of the last failed o2r_ctx_create (used by o2r_ctx_last_error(NULL)). */
const char *o2r_ctx_create_error(void)
{
    return g_create_err;
}

/* Byte count in binary units ("24.0 GiB"). */
static void human_bytes(uint64_t b, char *out, size_t cap)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(out, cap, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

o2r_status o2r_list_devices(void *fp)
{
    FILE *f = fp ? fp : stdout;
    struct o2r_ctx *c = o2r_calloc(1, sizeof *c);
    struct dev_entry *devs = NULL;
    cl_uint n = 0;
    if (!c) {
        fprintf(f, "out of host memory\n");
        return O2R_ERR_NOMEM;
    }
    o2r_status st = enum_devices(c, &devs, &n);
    if (st != O2R_OK) {
        fprintf(stderr, "no usable OpenCL device: %s\n", c->err);
        o2r_free(c);
        return st == O2R_ERR_NOMEM ? st : O2R_ERR_NODEVICE;
    }
    for (cl_uint i = 0; i < n; i++) {
        struct o2r_device_info in;
        o2r_query_device_info(devs[i].platform, devs[i].device, &in);
        char gm[32], ma[32], lm[32];
        human_bytes(in.global_mem, gm, sizeof gm);
        human_bytes(in.max_alloc, ma, sizeof ma);
        human_bytes(in.local_mem, lm, sizeof lm);
        const char *type = in.type & CL_DEVICE_TYPE_GPU ? "GPU"
                           : in.type & CL_DEVICE_TYPE_CPU ? "CPU"
                           : in.type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator" : "other";
        fprintf(f, "%u: %s\n", (unsigned)i, devs[i].name);
        fprintf(f, "   type %s, vendor %s, %u compute units at %u MHz\n", type, in.vendor,
                (unsigned)in.compute_units, (unsigned)in.max_clock_mhz);
        fprintf(f, "   memory %s, max allocation %s, local memory %s%s, max work-group %llu\n", gm,
                ma, lm, in.local_mem_dedicated ? "" : " (emulated in global memory)",
                (unsigned long long)in.max_wg_size);
        static const char half_probe[] =
            "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
            "__kernel void probe(__global half *x) { half a = x[0]; x[0] = a * a + (half)1; }\n";
        static const char vload_half_probe[] =
            "__kernel void probe(__global const half *x, __global float *y) {\n"
            "    y[0] = vload_half(0, x); vstore_half(y[0], 1, (__global half *)x); }\n";
        /* the probes may fail by design; some compilers (PoCL's clang) print their diagnostics
         * straight to fd 2, which would look like an error of --list-devices */
        int saved = o2r_stderr_mute();
        const int vh = o2r_probe_build(devs[i].platform, devs[i].device, vload_half_probe);
        const int hf = o2r_probe_build(devs[i].platform, devs[i].device, half_probe);
        o2r_stderr_restore(saved);
        fprintf(f, "   %s; %s; driver %s; float64 %s; half storage (vload_half) %s; half "
                "arithmetic (cl_khr_fp16, by compiling) %s; kernels by default: %s\n", in.version,
                in.c_version, in.driver, in.fp64 ? "yes" : "no", vh ? "yes" : "NO",
                hf ? "compiles" : "does not compile",
                in.type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR) ? "gpu" : "cpu");
    }
    o2r_free(devs);
    o2r_free(c);
    return O2R_OK;
}
