/* onnx2cl.c — command-line driver (being written). */
#include <stdio.h>
int main(void) { fputs("onnx2cl: driver not built yet\n", stderr); return 1; }
