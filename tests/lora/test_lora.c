/* test_lora.c — store/lora.c against diffusers: for each (checkpoint, LoRA, reference) case,
 * every weight the store's LoRA resolution touches, merged at scale 0.8 (o2s_lora_apply on the
 * base's float32 values), equals diffusers' load_lora_weights + fuse_lora(lora_scale=0.8) value
 * (ref_*.safetensors, models/make_test_loras.py) within 1e-6 x max|ref| of the tensor, and the
 * set of touched weights is exactly the reference's. Usage: test_lora CKPT_DIR LORA_DIR. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/safetensors.h"
#include "store.h"

static int check(const char *ckdir, const char *ldir, const char *ckpt, const char *lora,
                 const char *ref)
{
    char p[4096], err[2048];
    snprintf(p, sizeof p, "%s/%s", ckdir, ckpt);
    struct o2s_store *s = o2s_open(p, NULL, err, sizeof err);
    if (!s) { printf("FAIL: %s\n", err); return 1; }
    snprintf(p, sizeof p, "%s/%s", ldir, lora);
    struct o2s_lora *l = o2s_lora_open(p, s, err, sizeof err);
    if (!l) { printf("FAIL: %s\n", err); o2s_close(s); return 1; }
    snprintf(p, sizeof p, "%s/%s", ldir, ref);
    struct ir_graph *g = ir_graph_new(p);
    struct st_file rf;
    st_read(g, p, &rf);
    int bad = 0;
    double worst = 0;
    if (rf.n != o2s_lora_count(l)) {
        printf("FAIL: %s on %s: %zu weights touched, diffusers changed %zu\n", lora, ckpt,
               o2s_lora_count(l), rf.n);
        bad = 1;
    }
    for (size_t i = 0; i < o2s_lora_count(l); i++) {
        const struct o2s_lora_entry *e = o2s_lora_get(l, i);
        char name[1024];
        snprintf(name, sizeof name, "%s/%s", o2s_component_name(e->component), e->key);
        const struct st_tensor *t = NULL;
        for (size_t k = 0; k < rf.n && !t; k++)
            if (strcmp(rf.t[k].name, name) == 0) t = &rf.t[k];
        struct o2s_view v;
        o2s_find(s, e->component, e->key, &v);
        uint64_t n = o2s_elements(&v);
        if (!t || t->dtype != IR_F32 || t->nbytes != n * 4) {
            printf("FAIL: %s: %s (from '%s') is not in %s as %llu float32\n", lora, name,
                   e->module, ref, (unsigned long long)n);
            bad = 1;
            continue;
        }
        float *w = malloc(n * sizeof *w), *r = malloc(n * sizeof *r);
        o2s_to_f32(&v, w);
        o2s_lora_apply(e, 0.8f, w);
        memcpy(r, t->data, n * 4);
        double mx = 0, d = 0;
        for (uint64_t k = 0; k < n; k++) mx = fmax(mx, fabs(r[k]));
        for (uint64_t k = 0; k < n; k++) d = fmax(d, fabs((double)w[k] - r[k]));
        if (d > 1e-6 * mx) {
            printf("FAIL: %s: %s: max |merged - diffusers| %.3g > 1e-6 x max|ref| (%.3g)\n", lora,
                   name, d, mx);
            bad = 1;
        }
        if (mx > 0 && d / mx > worst) worst = d / mx;
        free(w);
        free(r);
    }
    printf("%s %s on %s: %zu weights, worst |merged - diffusers| / max|ref| = %.2g\n",
           bad ? "FAIL" : "ok  ", lora, ckpt, o2s_lora_count(l), worst);
    o2s_lora_close(l);
    o2s_close(s);
    ir_graph_free(g);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: test_lora CKPT_DIR LORA_DIR\n"); return 2; }
    static const char *const cases[][3] = {
        {"sd1/diffusers", "sd1_peft.safetensors", "ref_sd1_peft.safetensors"},
        {"sd1/sd1.safetensors", "sd1_peft.safetensors", "ref_sd1_peft.safetensors"},
        {"sd1/sd1_f16.safetensors", "sd1_kohya.safetensors", NULL},
        {"sd1/diffusers", "sd1_kohya.safetensors", "ref_sd1_kohya.safetensors"},
        {"sd1/sd1.safetensors", "sd1_kohya.safetensors", "ref_sd1_kohya.safetensors"},
        {"sd1/diffusers", "sd1_kohya_ldm.safetensors", "ref_sd1_kohya.safetensors"},
        {"sd1/sd1.safetensors", "sd1_kohya_ldm.safetensors", "ref_sd1_kohya.safetensors"},
        {"sd2/diffusers", "sd2_peft.safetensors", "ref_sd2_peft.safetensors"},
        {"sd2/sd2.safetensors", "sd2_peft.safetensors", "ref_sd2_peft.safetensors"},
        {"sd2/diffusers", "sd2_kohya.safetensors", "ref_sd2_kohya.safetensors"},
        {"sd2/sd2.safetensors", "sd2_kohya.safetensors", "ref_sd2_kohya.safetensors"},
        /* SDXL (models/make_sdxl_loras.py): kohya's sgm UNet paths, LoCon, lora_te1_/lora_te2_
         * (text_encoder_2's q/k/v are row slices of OpenCLIP's in_proj in the single file);
         * PEFT unet./text_encoder./text_encoder_2. with per-component lora_alpha metadata */
        {"sdxl/sdxl.safetensors", "sdxl_kohya.safetensors", "ref_sdxl_kohya.safetensors"},
        {"sdxl/diffusers", "sdxl_kohya.safetensors", "ref_sdxl_kohya.safetensors"},
        {"sdxl/sdxl.safetensors", "sdxl_peft.safetensors", "ref_sdxl_peft.safetensors"},
        {"sdxl/diffusers", "sdxl_peft.safetensors", "ref_sdxl_peft.safetensors"},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (cases[i][2]) bad |= check(argv[1], argv[2], cases[i][0], cases[i][1], cases[i][2]);
    printf(bad ? "FAIL\n" : "ok\n");
    return bad;
}
