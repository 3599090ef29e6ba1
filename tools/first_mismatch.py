#!/usr/bin/env python3
"""first_mismatch.py — names the first node whose output differs between onnx2cl and onnxruntime.

    python3 tools/first_mismatch.py MODEL.onnx --input NAME=FILE.npy ... [--shape NAME=D0,D1,...]
    (an input with symbolic dims and no --shape takes the shape of its --input array)
        [--bind NAME=FILE.npy] [--expose NAME[,NAME...]|all] [--onnx2cl build/onnx2cl]
        [--reference REF.onnx] [--atol 1e-4] [--rtol 1e-3] [--work DIR] [-- EXTRA onnx2cl FLAGS]

What it does:
  1. compiles MODEL with `onnx2cl --expose` (default: every output of every node of the main
     graph) into an executable and runs it on the inputs, writing every output and exposed value;
  2. runs onnxruntime (CPU) on REF (default: MODEL itself) with the same values added as graph
     outputs (onnx.helper + shape inference for their types) on the same inputs (--bind values
     are fed as inputs there);
  3. walks the nodes of MODEL in topological order and reports the first one with an output
     outside |onnx2cl - ort| <= atol + rtol * |ort| (both criteria), with its max abs and max
     relative error; NaN must match NaN, infinities must match exactly.
Exit status: 0 every compared value is within tolerance, 1 a mismatch was found (printed as
`first mismatch: node 'NAME' (OpType, #INDEX) output 'VALUE': max abs err E ...`), 2 usage or
tool failure (compile, run). Needs numpy, onnx and onnxruntime (not needed by the build or by
onnx2cl itself).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, shape_inference


def parse_kv(items, what):
    out = {}
    for it in items or []:
        if "=" not in it:
            sys.exit(f"first_mismatch: {what} {it}: expected NAME=VALUE")
        k, v = it.split("=", 1)
        out[k] = v
    return out


def topo_nodes(graph):
    """The main graph's nodes in a topological order (file order where the file is sorted)."""
    produced = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    pending, order = list(enumerate(graph.node)), []
    while pending:
        rest = []
        for idx, n in pending:
            if all(not x or x in produced for x in n.input):
                order.append((idx, n))
                produced.update(o for o in n.output if o)
            else:
                rest.append((idx, n))
        if len(rest) == len(pending):  # values from outer scopes / cycles: keep file order
            order.extend(rest)
            break
        pending = rest
    return order


def reads(graph):
    """Every value name a node of graph (or of its subgraphs) reads."""
    out = set()
    for n in graph.node:
        out.update(n.input)
        for at in n.attribute:
            for sub in ([at.g] if at.HasField("g") else []) + list(at.graphs):
                out |= reads(sub)
    return out


def with_outputs(model, names):
    """A copy of model with `names` added as graph outputs (types from shape inference)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    try:
        inferred = shape_inference.infer_shapes(m)
    except Exception:  # noqa: BLE001 - inference is best effort; ORT infers the rest
        inferred = m
    types = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    have = {o.name for o in m.graph.output}
    for nm in names:
        if nm in have:
            continue
        if nm in types and types[nm].type.tensor_type.elem_type:
            vi = onnx.ValueInfoProto()
            vi.CopyFrom(types[nm])
        else:
            vi = helper.make_empty_tensor_value_info(nm)
        m.graph.output.append(vi)
    return m


def compare(got, ref, atol, rtol):
    """(ok, max_abs, max_rel) of got vs ref."""
    if got.shape != ref.shape:
        return False, float("inf"), float("inf")
    if got.dtype == np.bool_ or ref.dtype == np.bool_:
        bad = int(np.count_nonzero(got.astype(bool) != ref.astype(bool)))
        return bad == 0, float(bad), float(bad)
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    if g.size == 0:
        return True, 0.0, 0.0
    nan_ok = np.array_equal(np.isnan(g), np.isnan(r))
    inf_ok = np.array_equal(g[np.isinf(g) | np.isinf(r)], r[np.isinf(g) | np.isinf(r)])
    fin = np.isfinite(g) & np.isfinite(r)
    d = np.abs(g[fin] - r[fin])
    lim = atol + rtol * np.abs(r[fin])
    max_abs = float(d.max()) if d.size else 0.0
    max_rel = float((d / np.maximum(np.abs(r[fin]), 1e-30)).max()) if d.size else 0.0
    return bool(nan_ok and inf_ok and np.all(d <= lim)), max_abs, max_rel


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[], help="NAME=FILE.npy (every graph input)")
    ap.add_argument("--shape", action="append", default=[], help="passed to onnx2cl")
    ap.add_argument("--bind", action="append", default=[], help="passed to onnx2cl; fed to onnxruntime")
    ap.add_argument("--expose", default="all", help="NAME[,NAME...] or all (default)")
    ap.add_argument("--onnx2cl", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                      "build", "onnx2cl"))
    ap.add_argument("--reference", help="model onnxruntime runs (default: MODEL)")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--work", help="working folder (default: a temporary one)")
    ap.add_argument("extra", nargs="*", help="after --: more onnx2cl flags")
    a = ap.parse_args()

    model = onnx.load(a.model)
    ref_model = onnx.load(a.reference) if a.reference else model
    order = topo_nodes(model.graph)
    if a.expose == "all":  # as onnx2cl's: node outputs that a node reads (Constant nodes: none)
        read = reads(model.graph)
        names = [o for _, n in order if n.op_type != "Constant" for o in n.output if o and o in read]
    else:
        names = [s for s in a.expose.split(",") if s]
    outs = [o.name for o in model.graph.output]
    wanted = outs + [n for n in names if n not in outs]

    inputs = {k: np.load(v) for k, v in parse_kv(a.input, "--input").items()}
    binds = parse_kv(a.bind, "--bind")
    feeds = dict(inputs)
    feeds.update({k: np.load(v) for k, v in binds.items()})

    work = a.work or tempfile.mkdtemp(prefix="first_mismatch.")
    os.makedirs(os.path.join(work, "out"), exist_ok=True)
    exe = os.path.join(work, "m")
    cmd = [a.onnx2cl, a.model, "-o", exe]
    # a graph input with a symbolic dim and no --shape takes the dims of its --input array
    shaped = {s.split("=", 1)[0] for s in a.shape}
    for gi in model.graph.input:
        dims = gi.type.tensor_type.shape.dim
        if gi.name in inputs and gi.name not in shaped and any(not d.HasField("dim_value") for d in dims):
            cmd.append(f"--shape={gi.name}=" + ",".join(str(d) for d in inputs[gi.name].shape))
    cmd += [f"--shape={s}" for s in a.shape] + [f"--bind={b}" for b in a.bind]
    if a.expose == "all":  # one argument may not exceed 128 KiB (MAX_ARG_STRLEN): no name list
        cmd += ["--expose=all"]
    elif len(wanted) > len(outs):
        cmd += ["--expose=" + ",".join(n for n in names if n not in outs)]
    cmd += a.extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"first_mismatch: onnx2cl failed (exit {r.returncode})")
    files = {nm: os.path.join(work, "out", f"{i}.npy") for i, nm in enumerate(wanted)}
    run = [exe] + [f"--input={k}={v}" for k, v in parse_kv(a.input, "--input").items()]
    run += [f"--output={nm}={f}" for nm, f in files.items()]
    r = subprocess.run(run, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        sys.exit(f"first_mismatch: the compiled model failed (exit {r.returncode})")

    import onnxruntime as ort  # imported late: only the comparison needs it

    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(with_outputs(ref_model, wanted).SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    ort_names = [o.name for o in sess.get_outputs()]
    ref = dict(zip(ort_names, sess.run(None, {i.name: feeds[i.name] for i in sess.get_inputs()})))

    compared = 0
    checks = [(idx, n, o) for idx, n in order for o in n.output if o in files and o in ref]
    checks += [(-1, None, o) for o in outs if o in files and o in ref and not any(o == c[2] for c in checks)]
    for idx, n, o in checks:
        ok, max_abs, max_rel = compare(np.load(files[o]), np.asarray(ref[o]), a.atol, a.rtol)
        compared += 1
        if not ok:
            where = f"node '{n.name}' ({n.op_type}, #{idx})" if n is not None else "graph output"
            print(f"first mismatch: {where} output '{o}': max abs err {max_abs:.3g}, max rel err "
                  f"{max_rel:.3g} (tolerance {a.atol:g} + {a.rtol:g}*|ref|; {compared - 1} values "
                  f"before it in topological order agree)")
            return 1
    print(f"no mismatch: {compared} values within {a.atol:g} + {a.rtol:g}*|ref|")
    return 0


if __name__ == "__main__":
    sys.exit(main())
