/* safetensors.h — initializer values from a safetensors file (`onnx2cl --weights-from`), and
 * the checked tensor list of such a file (st_read: what the name map's source is built on).
 * Format, checks and conversions: frontend/safetensors.c. */
#ifndef ONNX2CL_FRONTEND_SAFETENSORS_H
#define ONNX2CL_FRONTEND_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* What st_apply did. */
struct st_result {
    uint32_t applied;       /* initializers whose data now comes from the file */
    uint32_t initializers;  /* initializers of the model */
    uint32_t kept;          /* initializers the file does not name (they keep the ONNX values) */
    const char *first_kept; /* the first of those (NULL if none) */
};

/* One tensor of a safetensors file, checked against the file (dtype known, dims x dtype size ==
 * bytes, inside the data region). */
struct st_tensor {
    const char *name;          /* tensor name as the header spells it (graph arena) */
    enum ir_dtype dtype;       /* element type (IR_F32, IR_F16, IR_BF16, IR_F64, integers, bool) */
    int rank;                  /* number of dims */
    int64_t dims[IR_MAX_RANK]; /* dims, row-major */
    const void *data;          /* first byte, inside the file's mapping (little-endian, dense) */
    size_t nbytes;             /* bytes of data (numel x dtype size) */
};

/* A parsed safetensors file. */
struct st_file {
    const char *path;       /* file name, for messages */
    size_t n;               /* number of tensors */
    struct st_tensor *t;    /* the tensors in header order (graph arena) */
    bool has_metadata;      /* the header has a "__metadata__" object */
};

/* Parses and checks the safetensors bytes [bytes, bytes + size) named path (header length,
 * strict JSON, known dtypes, offsets inside the data region tiling it exactly, bytes == dims x
 * dtype): fills f (strings and arrays in g's arena; tensor data points into bytes). Every
 * problem is fatal (ir_die, exit 1) naming the file and the tensor. */
void st_read_buffer(struct ir_graph *g, const char *path, const void *bytes, size_t size,
                    struct st_file *f);
/* st_read_buffer over the file at path, mapped read-only for the life of the process. */
void st_read(struct ir_graph *g, const char *path, struct st_file *f);
/* Maps the regular file at path read-only for the life of the process; *size gets its bytes.
 * Fatal (exit 1, naming the file) when it cannot be opened, is not a regular file, or mmap
 * fails. Returns a non-NULL pointer (a static "" for an empty file). */
const void *st_map_file(const char *path, size_t *size);

/* Whether file tensors of dtype file may fill an initializer of dtype init: equal dtypes, any
 * float (F64, F32, F16, BF16) into F32, F32 or F16 into F16. */
bool st_dtype_fits(enum ir_dtype init, enum ir_dtype file);
/* Points (or converts) val's data to numel elements of dtype dt at src: used in place when
 * dt == val->dtype and src is aligned to the element size, else copied or converted into g's
 * arena (float to float32 exactly; to float16 rounded to nearest even). Sets val->nbytes.
 * Returns false (val untouched) when dt cannot fill val's dtype. */
bool st_fill(struct ir_graph *g, struct ir_value *val, enum ir_dtype dt, const void *src,
             uint64_t numel);
/* Element i of float data (IR_F64, IR_F32, IR_F16 or IR_BF16) as a float. */
float st_load_float(const void *data, enum ir_dtype t, uint64_t i);
/* The safetensors name of an ir dtype ("F32", "BF16", ...; "?" if it has none). */
const char *st_dtype_name(enum ir_dtype t);

/* Replaces the data of g's initializers (ir_value.is_param) by the same-named tensors of the
 * safetensors file at path. Every tensor of the file must match an initializer by name and dims
 * (and by dtype, or be a float dtype filling a float32 initializer, or F32/F16 filling a float16
 * one); otherwise nothing is replaced and the process exits with status 1 listing the tensors
 * that do not fit. A malformed file (header length, JSON, dtype, shape, offsets outside the data
 * region, a byte count that does not match shape x dtype) exits 1 naming the file and tensor.
 * Call after onnx_load, before passes_run. Returns the number of initializers replaced; res (may
 * be NULL) receives the counts. The file stays mapped for the life of the process. */
uint32_t st_apply(struct ir_graph *g, const char *path, struct st_result *res);
/* As st_apply, over size bytes in memory (which must outlive g's use of the initializers). */
uint32_t st_apply_buffer(struct ir_graph *g, const char *path, const void *bytes, size_t size,
                         struct st_result *res);

#endif
