/* onnx2cl_run.c — onnx2cl-run, the generic runner of descriptor files:
 *   onnx2cl-run MODEL.o2d [--input NAME=FILE ...] [options of a generated executable]
 * reads MODEL.o2d (written by `onnx2cl MODEL.onnx -o MODEL.o2d`; runtime/desc_io.c) and runs it
 * through o2r_main_ex, the command line of every generated executable, so the options are the
 * same; the default weights file is MODEL.weights (the .o2d extension replaced, else appended).
 * Needs no C compiler and no dlopen: the runtime and OpenCL only (portable like the runtime).
 * Exit status: 0 ok, 1 runtime error (also an unreadable or corrupt descriptor), 2 usage error.
 */
#include "onnx2cl_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: onnx2cl-run MODEL.o2d --input NAME=FILE ... [--output NAME=FILE.npy ...]\n"
          "                   [--output-dir DIR] [--weights PATH] [--device SPEC]\n"
          "                   [--kernels cpu|gpu|auto] [--bench N] [--profile] [--verbose]\n"
          "                   [--tune [SECONDS]]\n"
          "       onnx2cl-run MODEL.o2d --help      (the model's inputs, outputs and options)\n"
          "       onnx2cl-run --list-devices\n"
          "Runs a model compiled with `onnx2cl MODEL.onnx -o MODEL.o2d` (no C compiler needed);\n"
          "the options are those of a generated executable. Default weights: MODEL.weights.\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (strcmp(argv[1], "--list-devices") == 0)
        return o2r_list_devices(stdout) == O2R_OK && fflush(stdout) == 0 ? 0 : 1;
    if (argv[1][0] == '-') {
        fprintf(stderr, "onnx2cl-run: the first argument is the model (MODEL.o2d), not '%s'\n",
                argv[1]);
        usage(stderr);
        return 2;
    }
    const char *path = argv[1];
    char err[2048];
    struct o2r_model_desc *desc = NULL;
    if (o2r_desc_read(path, &desc, err, sizeof err) != O2R_OK) {
        fprintf(stderr, "onnx2cl-run: %s\n", err);
        return 1;
    }
    /* MODEL.o2d -> MODEL.weights; any other name: NAME.weights */
    size_t n = strlen(path);
    char *weights = malloc(n + 16);
    if (!weights) {
        o2r_desc_free(desc);
        fprintf(stderr, "onnx2cl-run: out of memory\n");
        return 1;
    }
    if (n > 4 && strcmp(path + n - 4, ".o2d") == 0)
        snprintf(weights, n + 16, "%.*s.weights", (int)(n - 4), path);
    else
        snprintf(weights, n + 16, "%s.weights", path);
    argv[1] = argv[0]; /* the model's command line: argv[0] then the options */
    int rc = o2r_main_ex(desc, weights, "onnx2cl-run", argc - 1, argv + 1);
    free(weights);
    o2r_desc_free(desc);
    return rc;
}
