/* kt_smoke.c — smoke test of the kernel harness: a broadcasting Add and a MatMul with odd
 * sizes, compiled and run on the OpenCL device, compared with the reference implementation. */
#include "harness.h"

#include <stdio.h>

int main(void)
{
    int fails = 0;
    {
        struct kt_case *c = kt_new("Add", 17);
        int64_t a[] = {3, 5, 7}, b[] = {5, 1};
        kt_input(c, IR_F32, 3, a, NULL, false);
        kt_input(c, IR_F32, 2, b, NULL, true);
        fails += kt_run(c, "Add [3,5,7]+[5,1]", 0, 0);
    }
    {
        struct kt_case *c = kt_new("MatMul", 17);
        int64_t a[] = {2, 13, 17}, b[] = {17, 9};
        kt_input(c, IR_F32, 3, a, NULL, false);
        kt_input(c, IR_F32, 2, b, NULL, true);
        fails += kt_run(c, "MatMul [2,13,17]x[17,9]", 1e-5, 1e-4);
    }
    printf("%d passed, %d failed\n", 2 - fails, fails);
    return fails != 0;
}
