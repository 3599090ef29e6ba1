/* sd_serve_none.c — `onnx2cl-sd serve` in a build without the HTTP server (-DONNX2CL_SERVE=OFF:
 * no libmicrohttpd). Says so and exits 2; the one-shot CLI and
 * libonnx2cl-sd (sd_session.h) are unaffected.
 */
#include "sd_serve.h"

#include <stdio.h>

int sd_serve_main(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "onnx2cl-sd serve: this onnx2cl-sd was built without the HTTP server "
                    "(no libmicrohttpd; -DONNX2CL_SERVE=OFF): use the one-shot command line, or "
                    "libonnx2cl-sd (sd_session.h) from a program\n");
    return 2;
}
