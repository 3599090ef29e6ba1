/* roialign.cl — RoiAlign-10/16 (mode avg/max; coordinate_transformation_mode half_pixel or
 * output_half_pixel).
 *
 * Layout: X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2 in input-image units), batch_indices B [R]
 * (int64), Y [R, C, OH, OW], all dense row-major. One work-item per output element
 * (gws[0] = R*C*OH*OW, pw fastest).
 * Per roi (the ONNX reference evaluator / onnxruntime): start = coord * spatial_scale - (half ?
 * 0.5 : 0); roi size = end - start (at least 1 without half_pixel); bin = size / OH (OW);
 * sampling grid gh x gw = sampling_ratio, or ceil(size / OH) (OW) when 0; sample (iy, ix) of
 * bin (ph, pw) at start + ph*bin + (iy + 0.5)*bin/gh. A sample with y < -1 or y > H (x alike)
 * counts 0; otherwise it is clamped at 0 and bilinearly interpolated (at the last row/column the
 * low index is used twice). avg: sum / max(gh*gw, 1); max: max over samples of the largest of
 * the four weighted corner terms.
 * A batch index outside [0, N) cannot be reported from a kernel: its outputs are NaN (the
 * reference, used by constant folding, rejects it).
 */

__kernel void KN(roialign)(__global const T *X, __global const T *rois, __global const long *B,
                           __global T *Y, int N, int C, int H, int W, int OH, int OW, int sr,
                           float scale, int half_pixel, int mode, int total)
{
    const int gid = (int)get_global_id(0);
    if (gid >= total) return;
    const int pw = gid % OW;
    int t = gid / OW;
    const int ph = t % OH;
    t /= OH;
    const int c = t % C;
    const int r = t / C;
    const long b = B[r];
    if (b < 0 || b >= N) {
        Y[gid] = (T)NAN;
        return;
    }
    const float off = half_pixel ? 0.5f : 0.0f;
    const float x1 = (float)rois[r * 4 + 0] * scale - off, y1 = (float)rois[r * 4 + 1] * scale - off;
    const float x2 = (float)rois[r * 4 + 2] * scale - off, y2 = (float)rois[r * 4 + 3] * scale - off;
    float rw = x2 - x1, rh = y2 - y1;
    if (!half_pixel) {
        rw = fmax(rw, 1.0f);
        rh = fmax(rh, 1.0f);
    }
    const float bh = rh / (float)OH, bw = rw / (float)OW;
    float ghf = sr > 0 ? (float)sr : ceil(rh / (float)OH);
    float gwf = sr > 0 ? (float)sr : ceil(rw / (float)OW);
    ghf = ghf > 0.0f ? fmin(ghf, 65536.0f) : 0.0f; /* NaN -> 0 */
    gwf = gwf > 0.0f ? fmin(gwf, 65536.0f) : 0.0f;
    const int gh = (int)ghf, gw = (int)gwf;
    const __global T *x = X + (b * C + c) * H * W;
    float acc = 0.0f;
    bool first = true;
    for (int iy = 0; iy < gh; iy++) {
        const float y = y1 + (float)ph * bh + ((float)iy + 0.5f) * bh / (float)gh;
        for (int ix = 0; ix < gw; ix++) {
            float xx = x1 + (float)pw * bw + ((float)ix + 0.5f) * bw / (float)gw, yy = y;
            float v = 0.0f;
            if (yy >= -1.0f && yy <= (float)H && xx >= -1.0f && xx <= (float)W) {
                yy = fmax(yy, 0.0f);
                xx = fmax(xx, 0.0f);
                int yl = (int)yy, xl = (int)xx, yh, xh;
                if (yl >= H - 1) {
                    yh = yl = H - 1;
                    yy = (float)yl;
                } else {
                    yh = yl + 1;
                }
                if (xl >= W - 1) {
                    xh = xl = W - 1;
                    xx = (float)xl;
                } else {
                    xh = xl + 1;
                }
                const float ly = yy - (float)yl, lx = xx - (float)xl, hy = 1.0f - ly,
                            hx = 1.0f - lx;
                const float t1 = hy * hx * (float)x[yl * W + xl];
                const float t2 = hy * lx * (float)x[yl * W + xh];
                const float t3 = ly * hx * (float)x[yh * W + xl];
                const float t4 = ly * lx * (float)x[yh * W + xh];
                if (mode == 0) {
                    v = t1 + t2 + t3 + t4;
                } else {
                    v = t1 > t2 ? t1 : t2;
                    v = v > t3 ? v : t3;
                    v = v > t4 ? v : t4;
                }
            }
            if (mode == 0) acc += v;
            else if (first || v > acc) acc = v;
            first = false;
        }
    }
    if (mode == 0) acc /= (float)max(gh * gw, 1);
    Y[gid] = (T)acc;
}
