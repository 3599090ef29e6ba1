/* test_ref_conformance.c — runs infer_node + ref_eval over the ONNX backend node tests
 * (/usr/include/onnx/backend/test/data/node/<test>/{model.onnx, test_data_set_0/NAME.pb}).
 *
 * Usage:
 *   test_ref_conformance one <test_dir>                 one test, verbose
 *   test_ref_conformance all <node_dir> <exclude_file>  every test folder, each in a child
 *                                                       process; prints
 *                                                       "N passed, M failed, K unsupported"
 * A test is "unsupported" when its model uses an op outside ir/ops.def or a non-default domain,
 * a string tensor, or when ref_eval() declines an op/dtype; it "fails" on a wrong value/shape
 * or on a fatal error of the importer / shape inference / reference. Tests named in the
 * exclusion file (one name per line, then a reason) are skipped. Exit status: 0 iff nothing
 * outside the exclusion list failed.
 * Tolerances (|got - want| <= atol + rtol * |want|, NaN must match NaN, +-inf exact):
 * float32/float64 atol 1e-5 rtol 1e-3 (the backend runner's rtol); float16 atol 1e-3 rtol 1e-3; bfloat16 atol 1e-2
 * rtol 1e-2; integers and bool exact. The .pb files are decoded with the protobuf-c bindings
 * of onnx.proto (test-only; the compiler proper keeps protobuf inside frontend/).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frontend/onnx_load.h"
#include "onnx/onnx.pb-c.h"
#include "passes/expand/expand.h"
#include "ref/ref_util.h"

enum { RC_PASS = 0, RC_FATAL = 1, RC_FAIL = 2, RC_UNSUPPORTED = 3 };

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(b);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* A decoded TensorProto. */
struct tensor {
    enum ir_dtype dtype;        /* element type */
    int rank;                   /* number of dims */
    int64_t dims[IR_MAX_RANK];  /* dims */
    void *data;                 /* dense little-endian data (malloc) */
    size_t nbytes;              /* bytes of data */
};

/* Returns RC_PASS, RC_UNSUPPORTED (string/odd dtype) or RC_FAIL (unreadable). */
static int read_pb(const char *path, struct tensor *t)
{
    size_t len;
    unsigned char *buf = read_file(path, &len);
    if (!buf) {
        fprintf(stderr, "%s: cannot read\n", path);
        return RC_FAIL;
    }
    Onnx__TensorProto *p = onnx__tensor_proto__unpack(NULL, len, buf);
    free(buf);
    if (!p) {
        fprintf(stderr, "%s: not a TensorProto\n", path);
        return RC_FAIL;
    }
    memset(t, 0, sizeof *t);
    t->dtype = (enum ir_dtype)p->data_type;
    size_t es = ir_dtype_size(t->dtype);
    if (!ref_is_supported(t->dtype) || es == 0 || p->n_dims > IR_MAX_RANK) {
        fprintf(stderr, "%s: unsupported dtype %d\n", path, p->data_type);
        onnx__tensor_proto__free_unpacked(p, NULL);
        return RC_UNSUPPORTED;
    }
    t->rank = (int)p->n_dims;
    int64_t numel = 1;
    for (int k = 0; k < t->rank; k++) {
        t->dims[k] = p->dims[k];
        numel *= p->dims[k];
    }
    t->nbytes = (size_t)numel * es;
    t->data = calloc(1, t->nbytes + 1);
    if (p->has_raw_data) {
        if (p->raw_data.len != t->nbytes) {
            fprintf(stderr, "%s: raw_data has %zu bytes, expected %zu\n", path, p->raw_data.len,
                    t->nbytes);
            onnx__tensor_proto__free_unpacked(p, NULL);
            return RC_FAIL;
        }
        if (t->nbytes) memcpy(t->data, p->raw_data.data, t->nbytes);
    } else {
        for (int64_t i = 0; i < numel; i++) {
            switch (t->dtype) {
            case IR_F32: ((float *)t->data)[i] = p->float_data[i]; break;
            case IR_F64: ((double *)t->data)[i] = p->double_data[i]; break;
            case IR_I64: ((int64_t *)t->data)[i] = p->int64_data[i]; break;
            case IR_U32:
            case IR_U64: ref_set_i(t->data, t->dtype, i, (int64_t)p->uint64_data[i]); break;
            case IR_F16:
            case IR_BF16: ((uint16_t *)t->data)[i] = (uint16_t)p->int32_data[i]; break;
            default: ref_set_i(t->data, t->dtype, i, p->int32_data[i]); break;
            }
        }
    }
    onnx__tensor_proto__free_unpacked(p, NULL);
    return RC_PASS;
}

/* Checks the ops of the model before the importer sees it (the importer is fatal on ops it
 * does not know, which is "unsupported" here, not a failure). */
static int check_model_ops(const char *model)
{
    size_t len;
    unsigned char *buf = read_file(model, &len);
    if (!buf) return RC_FAIL;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    if (!m || !m->graph) return RC_FAIL;
    int rc = RC_PASS;
    for (size_t i = 0; i < m->graph->n_input + m->graph->n_output && rc == RC_PASS; i++) {
        const Onnx__ValueInfoProto *vi = i < m->graph->n_input
                                             ? m->graph->input[i]
                                             : m->graph->output[i - m->graph->n_input];
        if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
            fprintf(stderr, "unsupported: graph input/output '%s' is not a tensor\n", vi->name);
            rc = RC_UNSUPPORTED;
        }
    }
    for (size_t i = 0; i < m->graph->n_node && rc == RC_PASS; i++) {
        const Onnx__NodeProto *nd = m->graph->node[i];
        bool dflt = !nd->domain || !*nd->domain || !strcmp(nd->domain, "ai.onnx");
        if (!dflt || (ir_op_lookup(nd->op_type) == IR_OP_UNKNOWN && strcmp(nd->op_type, "Constant"))) {
            fprintf(stderr, "unsupported op %s%s%s\n", dflt ? "" : nd->domain, dflt ? "" : ".",
                    nd->op_type);
            rc = RC_UNSUPPORTED;
        }
        for (size_t a = 0; a < nd->n_attribute && rc == RC_PASS; a++)
            if (nd->attribute[a]->g || nd->attribute[a]->n_graphs) {
                fprintf(stderr, "unsupported: subgraph attribute in %s\n", nd->op_type);
                rc = RC_UNSUPPORTED;
            }
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return rc;
}

static bool close_enough(enum ir_dtype t, double got, double want)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    double atol = 1e-5, rtol = 1e-3;
    if (t == IR_F16) atol = rtol = 1e-3;
    if (t == IR_BF16) atol = rtol = 1e-2;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

static int run_one(const char *dir, bool verbose)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    int rc = check_model_ops(path);
    if (rc != RC_PASS) return rc;
    /* read the data first so string tensors are "unsupported" before the importer runs */
    struct tensor ins[64], outs[64];
    int nin = 0, nout = 0;
    for (; nin < 64; nin++) {
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, nin);
        if (access(path, R_OK)) break;
        if ((rc = read_pb(path, &ins[nin])) != RC_PASS) return rc;
    }
    for (; nout < 64; nout++) {
        snprintf(path, sizeof path, "%s/test_data_set_0/output_%d.pb", dir, nout);
        if (access(path, R_OK)) break;
        if ((rc = read_pb(path, &outs[nout])) != RC_PASS) return rc;
    }
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    struct ir_graph *g = onnx_load(path);
    if ((int)g->ninputs != nin) {
        fprintf(stderr, "graph has %u inputs, test data %d\n", g->ninputs, nin);
        return RC_FAIL;
    }
    for (int k = 0; k < nin; k++) {
        struct ir_value *v = &g->values[g->inputs[k]];
        /* older test data stores bfloat16 tensors as uint16 */
        if (!(v->dtype == IR_BF16 && ins[k].dtype == IR_U16)) v->dtype = ins[k].dtype;
        v->rank = ins[k].rank;
        for (int d = 0; d < IR_MAX_RANK; d++) {
            v->dims[d] = d < ins[k].rank ? ins[k].dims[d] : 0;
            v->dim_param[d] = NULL;
        }
        v->dims_known = true;
        v->data = ins[k].data;
        v->nbytes = ins[k].nbytes;
    }
    for (uint32_t i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].dead) continue;
        if (ir_op_flags(g->nodes[i].op) & IR_F_FUNCTION) { /* expanded nodes fold as they are made */
            expand_node(g, i);
            continue;
        }
        infer_node(g, i);
        if (!ref_eval(g, i)) {
            const struct ir_node *n = &g->nodes[i];
            uint32_t v0 = n->ninputs ? n->inputs[0] : IR_NONE;
            fprintf(stderr, "ref_eval declined %s (input dtype %s)\n", ir_op_name(n->op),
                    v0 != IR_NONE ? ir_dtype_name(g->values[v0].dtype) : "-");
            return RC_UNSUPPORTED;
        }
    }
    if ((int)g->noutputs != nout) {
        fprintf(stderr, "graph has %u outputs, test data %d\n", g->noutputs, nout);
        return RC_FAIL;
    }
    rc = RC_PASS;
    for (int k = 0; k < nout; k++) {
        const struct ir_value *v = &g->values[g->outputs[k]];
        struct tensor *w = &outs[k];
        char b1[200];
        if (v->dtype == IR_BF16 && w->dtype == IR_U16) w->dtype = IR_BF16;
        if (v->dtype != w->dtype || v->rank != w->rank ||
            memcmp(v->dims, w->dims, sizeof(int64_t) * (size_t)w->rank)) {
            fprintf(stderr, "output %d '%s': got %s %s, want %s rank %d (dims[0]=%lld)\n", k,
                    v->name, ir_dtype_name(v->dtype), ir_dims_str(v, b1, sizeof b1),
                    ir_dtype_name(w->dtype), w->rank, w->rank ? (long long)w->dims[0] : 0LL);
            rc = RC_FAIL;
            continue;
        }
        int64_t cnt = ref_numel_v(v), bad = 0;
        for (int64_t i = 0; i < cnt; i++) {
            bool ok;
            double gv = ref_get_f(v->data, v->dtype, i), wv = ref_get_f(w->data, w->dtype, i);
            if (ref_is_float(v->dtype))
                ok = close_enough(v->dtype, gv, wv);
            else
                ok = ref_get_i(v->data, v->dtype, i) == ref_get_i(w->data, w->dtype, i);
            if (!ok && bad++ < 5)
                fprintf(stderr, "output %d '%s' [%lld]: got %.9g want %.9g\n", k, v->name,
                        (long long)i, gv, wv);
        }
        if (bad) {
            fprintf(stderr, "output %d '%s': %lld of %lld elements differ\n", k, v->name,
                    (long long)bad, (long long)cnt);
            rc = RC_FAIL;
        }
    }
    if (verbose && rc == RC_PASS) fprintf(stderr, "pass\n");
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool excluded(char **ex, int nex, const char *name)
{
    for (int i = 0; i < nex; i++)
        if (!strcmp(ex[i], name)) return true;
    return false;
}

static int run_all(const char *node_dir, const char *exclude_file)
{
    char *ex[1024];
    int nex = 0;
    FILE *f = fopen(exclude_file, "r");
    if (f) {
        char line[1024];
        while (fgets(line, sizeof line, f) && nex < 1024) {
            if (line[0] == '#' || line[0] == '\n') continue;
            line[strcspn(line, " \t\n")] = 0;
            ex[nex++] = strdup(line);
        }
        fclose(f);
    }
    DIR *d = opendir(node_dir);
    if (!d) {
        fprintf(stderr, "%s: cannot open\n", node_dir);
        return 1;
    }
    char **names = NULL;
    size_t nn = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "test_", 5)) continue;
        if (nn == cap) names = realloc(names, (cap = cap ? 2 * cap : 256) * sizeof *names);
        names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, nn, sizeof *names, cmp_str);
    int pass = 0, fail = 0, unsup = 0, skip = 0;
    char log[] = "/tmp/ref_conf_XXXXXX";
    int lfd = mkstemp(log);
    for (size_t i = 0; i < nn; i++) {
        if (excluded(ex, nex, names[i])) {
            skip++;
            continue;
        }
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", node_dir, names[i]);
        if (ftruncate(lfd, 0)) { /* ignore */ }
        lseek(lfd, 0, SEEK_SET);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(lfd, 2);
            _exit(run_one(dir, false));
        }
        int st = 0;
        waitpid(pid, &st, 0);
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : RC_FAIL;
        if (rc == RC_PASS) {
            pass++;
            continue;
        }
        if (rc == RC_UNSUPPORTED) {
            unsup++;
            continue;
        }
        fail++;
        char msg[600] = "";
        lseek(lfd, 0, SEEK_SET);
        ssize_t r = read(lfd, msg, sizeof msg - 1);
        msg[r > 0 ? r : 0] = 0;
        msg[strcspn(msg, "\n")] = 0;
        printf("FAIL %s: %s%s\n", names[i], WIFSIGNALED(st) ? "(crashed) " : "", msg);
    }
    close(lfd);
    unlink(log);
    printf("%d passed, %d failed, %d unsupported, %d excluded\n", pass, fail, unsup, skip);
    for (size_t i = 0; i < nn; i++) free(names[i]);
    free(names);
    for (int i = 0; i < nex; i++) free(ex[i]);
    return fail ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "one")) {
        int rc = run_one(argv[2], true);
        if (rc == RC_UNSUPPORTED) fprintf(stderr, "unsupported\n");
        return rc;
    }
    if (argc == 4 && !strcmp(argv[1], "all")) return run_all(argv[2], argv[3]);
    fprintf(stderr, "usage: %s one <test_dir> | all <node_dir> <exclude_file>\n", argv[0]);
    return 2;
}
