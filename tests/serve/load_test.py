#!/usr/bin/env python3
"""load_test.py ONNX2CL_SD WORK — `onnx2cl-sd serve` under load (issue 22: "a client that disconnects
loses its job, not the server's state"; no crash on any request), on the tiny SD 1.5 single file:

  1. 8 clients at once POST /sdapi/v1/txt2img (8 steps, seeds 100..107) while a 9th polls
     /sdapi/v1/progress: every answer is 200 with one 32x32 PNG whose infotext names its seed;
  2. meanwhile hostile connections: a body cut short of its Content-Length, a client that sends a
     whole request and closes without reading the answer, raw garbage, an idle connection;
  3. afterwards the same request as client 0's gives client 0's image byte for byte (nothing of
     the load leaked into the state), /health answers ok;
  4. a second server on the same address exits 1 at once, naming it (before loading models);
  5. SIGINT: the server exits 0, and its stderr holds no sanitizer report (this test is labelled
     bad-input, so the sanitizer job runs it against the ASan + LSan build: a leak or an invalid
     access in the server's request paths fails it).
Exit 0 when all hold; prints one line per check.
"""
import base64
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

from PIL import Image

sd, work = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
ckpt = os.path.normpath(os.path.join(here, "..", "pipeline", "oneshot", "tiny_sd15.safetensors"))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        fails.append(what)


with socket.socket() as s:  # a free port
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
base = f"http://127.0.0.1:{port}"
env = dict(os.environ, ONNX2CL_CACHE_DIR=os.path.join(work, "cache"))
errf = open(os.path.join(work, "server.err"), "w")
srv = subprocess.Popen([sd, "serve", "-m", ckpt, "--listen", f"127.0.0.1:{port}", "--width", "32", "--height", "32",
                        "--quiet"], stdout=errf, stderr=errf, env=env)


def call(method, path, body=None, timeout=600):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None


deadline = time.time() + 600
while time.time() < deadline:
    try:
        if call("GET", "/health", timeout=5)[0] == 200:
            break
    except OSError:
        pass
    if srv.poll() is not None:
        break
    time.sleep(0.5)
check(srv.poll() is None, "server started")

# a second server on the same address: refused at once, before loading any model
t_busy = time.time()
busy = subprocess.run([sd, "serve", "-m", ckpt, "--listen", f"127.0.0.1:{port}"], capture_output=True, text=True,
                      env=env, timeout=120)
check(busy.returncode == 1 and "cannot listen there" in busy.stderr and "loading" not in busy.stderr,
      f"a second server on the busy port: exit 1 before loading models in {time.time() - t_busy:.1f} s "
      f"({busy.stderr.strip()[:120]})")

results = {}


def client(i):
    body = {"prompt": f"a cat number {i}", "steps": 8, "seed": 100 + i, "cfg_scale": 7, "width": 32, "height": 32,
            "sampler_name": "Euler"}
    try:
        results[i] = call("POST", "/sdapi/v1/txt2img", body)
    except OSError as e:
        results[i] = (0, str(e))


polls = []
stop = threading.Event()


def poller():
    while not stop.is_set():
        t = time.time()
        try:
            st = call("GET", "/sdapi/v1/progress?skip_current_image=false", timeout=30)[0]
        except OSError:
            st = 0
        polls.append((st, time.time() - t))
        time.sleep(0.2)


def raw(payload, read=True, hold=0.0):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.sendall(payload)
            time.sleep(hold)
            if read:
                c.settimeout(5)
                c.recv(65536)
    except OSError:
        pass


req = json.dumps({"prompt": "gone", "steps": 2, "seed": 1}).encode()
hostile = [
    b"POST /sdapi/v1/txt2img HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"pro",
    b"POST /sdapi/v1/txt2img HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(req)).encode() + b"\r\n\r\n" + req,
    b"\x00\xff garbage \r\n\r\n",
]
threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
threads.append(threading.Thread(target=poller))
threads += [threading.Thread(target=raw, args=(hostile[0], False, 0.5)),
            threading.Thread(target=raw, args=(hostile[1], False)),
            threading.Thread(target=raw, args=(hostile[2],)),
            threading.Thread(target=raw, args=(b"", False, 2.0))]
t0 = time.time()
for t in threads:
    t.start()
for t in threads[:8]:
    t.join()
stop.set()
for t in threads[8:]:
    t.join()
wall = time.time() - t0
images = {}
for i in range(8):
    st, r = results.get(i, (0, None))
    ok = st == 200 and isinstance(r, dict) and len(r.get("images", [])) == 1
    if ok:
        png = base64.b64decode(r["images"][0])
        img = Image.open(io.BytesIO(png))
        info = json.loads(r["info"])
        ok = img.size == (32, 32) and info.get("seed") == 100 + i
        images[i] = png
    check(ok, f"client {i}: 200, one 32x32 PNG, seed {100 + i} in info")
check(polls and all(p[0] == 200 for p in polls), f"{len(polls)} progress polls during the load all 200")
print(f"progress answer times: max {max(p[1] for p in polls):.3f} s", flush=True)
print(f"8 requests + hostile connections in {wall:.1f} s", flush=True)
st, r = call("POST", "/sdapi/v1/txt2img", {"prompt": "a cat number 0", "steps": 8, "seed": 100, "cfg_scale": 7,
                                           "width": 32, "height": 32, "sampler_name": "Euler"})
check(st == 200 and base64.b64decode(r["images"][0]) == images.get(0), "after the load: client 0's image again, bit for bit")
check(call("GET", "/health")[0] == 200, "/health after the load")
srv.send_signal(signal.SIGINT)
try:
    code = srv.wait(timeout=120)
except subprocess.TimeoutExpired:
    srv.kill()
    code = -9
errf.close()
log = open(os.path.join(work, "server.err")).read()
check(code == 0, f"SIGINT: the server exits 0 (got {code})")
bad = [w for w in ("LeakSanitizer", "AddressSanitizer", "runtime error:") if w in log]
check(not bad, "no sanitizer report in the server's stderr" + (f" ({', '.join(bad)}; {os.path.join(work, 'server.err')})" if bad else ""))
print(f"load_test: {len(fails)} failed")
sys.exit(1 if fails else 0)
