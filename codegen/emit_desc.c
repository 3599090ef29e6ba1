/* emit_desc.c — writes the built model's descriptor as a descriptor file (.o2d), the data form
 * of the generated C file's descriptor: `onnx2cl MODEL.onnx -o OUT.o2d` (then OUT.weights beside
 * it, as for C). The bytes are o2r_desc_serialize's (runtime/desc_io.c, layout in
 * runtime/onnx2cl_rt.h) of the in-memory descriptor cg_build made, which is the one cg_write_c
 * prints (source segments of every class as mask 0, as there), so a .o2d run by onnx2cl-run
 * and the generated executable run the same launches, arguments and program source.
 * Deterministic; written atomically (temporary file + rename); fatal on error.
 */
#include "cg_internal.h"

#include <stdio.h>
#include <stdlib.h>

void cg_write_desc(const struct cg_ctx *m, const char *path)
{
    unsigned char *data = NULL;
    size_t len = 0;
    cg_checksum_ensure(m); /* part of the descriptor */
    o2r_status st = o2r_desc_serialize(&m->desc, &data, &len);
    if (st != O2R_OK)
        ir_die("%s: cannot serialize the model descriptor (%s)", path,
               st == O2R_ERR_NOMEM ? "out of memory" : "a table cannot be written");
    char *tmp;
    FILE *f = cg_open_tmp(path, &tmp);
    size_t put = fwrite(data, 1, len, f);
    free(data);
    if (put != len) {
        fclose(f);
        ir_die("%s: write failed", path);
    }
    cg_commit_tmp(f, tmp, path);
}
