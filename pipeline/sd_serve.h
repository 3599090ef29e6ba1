/* sd_serve.h — `onnx2cl-sd serve`: the HTTP server (AUTOMATIC1111/Forge API). */
#ifndef PIPELINE_SD_SERVE_H
#define PIPELINE_SD_SERVE_H

/* Runs `onnx2cl-sd serve` with argv[0] = "serve" and its options; returns the process exit status
 * (0 after a clean shutdown, 1 error, 2 usage). */
int sd_serve_main(int argc, char **argv);

#endif
