/* test_device.h — the OpenCL device for test harnesses that drive OpenCL directly
 * (tests/kernels_a/ka_cl.c, tests/kernels_b/clkb.c).
 *
 * What: test_cl_device() picks the device exactly as the runtime and every generated executable
 * do (o2r_ctx_create(NULL, ...)): $ONNX2CL_DEVICE = an index or a substring of
 * "platform / device", else the first GPU, else the first device. So one variable moves the
 * whole kernel tier to another implementation, e.g.
 *   ONNX2CL_DEVICE=Oclgrind OCL_ICD_VENDORS=<folder with oclgrind.icd> ctest -L kernels
 * Assumes: linked with onnx2cl_rt. Guarantees: returns a device or exits 1 with the runtime's
 * message (which lists the available devices when the spec matches none).
 */
#ifndef ONNX2CL_TEST_DEVICE_H
#define ONNX2CL_TEST_DEVICE_H

#include <stdio.h>
#include <stdlib.h>

#include "rt_internal.h"

static inline cl_device_id test_cl_device(void)
{
    struct o2r_ctx *c = NULL;
    if (o2r_ctx_create(NULL, &c) != O2R_OK) {
        fprintf(stderr, "no OpenCL device: %s\n", o2r_ctx_last_error(NULL));
        exit(1);
    }
    cl_device_id d = c->device; /* a root device: stays valid after its context is released */
    fprintf(stderr, "OpenCL device: %s\n", c->device_name);
    o2r_ctx_free(c);
    return d;
}

#endif
