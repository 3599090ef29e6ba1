/* sd_serve.c — `onnx2cl-sd serve` (being built: issue 22). */
#include "sd_serve.h"

#include <stdio.h>

int sd_serve_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "onnx2cl-sd serve: not in this build yet\n");
    return 2;
}
