#!/usr/bin/env python3
"""Writes the log set of one 10-minute 1 P + 3 D run for the `kvscope-cli import` end-to-end test.

Every line is printed from an upstream format string (file and commit beside each one below); only
the values are made up, by a fixed-seed generator, so that the run holds three known failures:
  - D2 is cold: it gets one stray request a minute while D0 and D1 run 20-40 each (mode B);
  - D1 crashes at 09:05:00 on the streaming-session invariant, right after the lab fork's
    correction line, and its restarted scheduler prints again from 09:06:00 (mode D);
  - the P0 -> D0 link dies from 09:07:00 to 09:08:00: P0's scheduler logs a transfer failure per
    request ("Decode instance could be dead ...") and the failed Mooncake session, and P0's
    transfer engine logs its own view (mode A).
Run it again to re-create the files byte for byte: python3 make_logs.py
"""
import collections
import datetime
import json
import random

rnd = random.Random(20260820)
T0 = datetime.datetime(2026, 8, 20, 9, 0, 0)
END_S = 600
D_ADDR = {"D0": "10.99.91.47:15295", "D1": "10.99.91.48:15295", "D2": "10.99.91.49:15295"}
CRASH_S, RESTART_S = 300, 360
LINK_DOWN_S, LINK_UP_S = 420, 480


def ts(t, ms=False):
    """configure_logger's asctime (python/sglang/srt/utils/common.py @ 004f0c7a8d398a9c4b6844c1d8071502fa88e78c)."""
    d = T0 + datetime.timedelta(seconds=t)
    return d.strftime("%Y-%m-%d %H:%M:%S") + (".%03d" % (d.microsecond // 1000) if ms else "")


def glog(sev, t, tid, src, msg):
    """glog's documented prefix: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg."""
    d = T0 + datetime.timedelta(seconds=t)
    return "%s%s %7d %s] %s" % (sev, d.strftime("%m%d %H:%M:%S.%f"), tid, src, msg)


def decode_batch(t, running, tokens, capacity, prealloc, transfer, queue):
    # sgl-project/sglang python/sglang/srt/observability/scheduler_metrics_mixin.py @ 44cedc2b9c7dd31d9acae4498ea4fa0d3665feed
    return ("[%s TP0] Decode batch, #running-req: %d, #token: %d, token usage: %.2f, pre-allocated usage: %.2f, "
            "#prealloc-req: %d, #transfer-req: %d, #retracted-req: 0, cuda graph: True, gen throughput (token/s): %.2f, "
            "#queue-req: %d" % (ts(t), running, tokens, tokens / capacity, 0.01 * prealloc, prealloc, transfer,
                                running * rnd.uniform(28, 36), queue))


def prefill_batch(t, new_seq, new_token, cached, usage, queue, prealloc):
    # sgl-project/sglang python/sglang/srt/observability/scheduler_metrics_mixin.py @ 44cedc2b9c7dd31d9acae4498ea4fa0d3665feed
    return ("[%s TP0] Prefill batch, #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, "
            "#running-req: 0, #queue-req: %d, #prealloc-req: %d, #inflight-req: %d, input throughput (token/s): %.2f, "
            "cuda graph: False" % (ts(t), new_seq, new_token, cached, usage, queue, prealloc, new_seq,
                                  new_token / rnd.uniform(0.25, 0.6)))


CAPACITY = 220000
lines = {name: [] for name in ("p0.log", "d0.log", "d1.log", "d2.log", "p0-mooncake.log")}

# Decode workers: a line every ~1.5 s while they run (decode_log_interval = 40 iterations).
for name, base in (("d0.log", 34), ("d1.log", 30)):
    t = 0.7 if name == "d0.log" else 1.1
    while t < END_S:
        if name == "d1.log" and CRASH_S - 2 <= t < RESTART_S:
            t = RESTART_S
            continue
        link_down = name == "d0.log" and LINK_DOWN_S <= t < LINK_UP_S
        running = max(1, base + rnd.randint(-6, 6) - (int((t - LINK_DOWN_S) / 3) if link_down else 0))
        tokens = min(CAPACITY - 1000, running * rnd.randint(4200, 5200))
        lines[name].append(decode_batch(t, running, tokens, CAPACITY, rnd.randint(0, 3), rnd.randint(0, 2), 0))
        t += rnd.uniform(1.2, 1.8)

# D2, cold: a stray request now and then, a few lines while it runs, then nothing.
for start in range(40, END_S, 60):
    for k in range(3):
        lines["d2.log"].append(decode_batch(start + 1.5 * k, 1, 4100 + 10 * k, CAPACITY, 0, 0, 0))

# D1's crash: the lab fork's correction line (its text: the lab's notes, not upstream), then the
# scheduler's exception (python/sglang/srt/managers/scheduler.py @ 0003215cf1464f44b389cd0b18d0b4c56f2a3da6,
# "Scheduler hit an exception: " + get_exception_traceback()) and the traceback Python prints.
crash = [
    "[%s TP0] Correcting streaming-session extend_input_len from 6648 to 0 (rid=6f4318e93dd543a49dbf19248cfc1e6f, "
    "session_id=1000195, fill_len=6648, prefix_len=43459, kv_committed_len=43459)" % ts(CRASH_S - 1),
    "[%s TP0] Scheduler hit an exception: Traceback (most recent call last):" % ts(CRASH_S - 1),
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 3012, in run_scheduler_process',
    "    scheduler.run_event_loop()",
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/schedule_batch.py", line 1646, in prepare_for_extend',
    "    assert seq_len - pre_len == req.extend_input_len",
    "AssertionError",
    # python/sglang/srt/entrypoints/engine.py @ 18bfdd16794a857cefaebc00a0964935b8d0a026
    "[%s] Received sigquit from a child process. It usually means the child failed." % ts(CRASH_S),
]
d1 = lines["d1.log"]
at = next(i for i, l in enumerate(d1) if l[1:20] >= ts(CRASH_S - 1))
lines["d1.log"] = d1[:at] + crash + d1[at:]

# P0: a prefill batch line about every second; during the link failure every request bound for D0
# fails (python/sglang/srt/disaggregation/prefill.py @ 000c2b942308ea5502978be73542016c230dba02 logs
# "Prefill transfer failed for request rank=... with exception " + the KVTransferError that
# python/sglang/srt/disaggregation/mooncake/conn.py @ 0005973a84f7a02787e270b6be5970d3022d07fe raises).
t = 0.4
room = 6593551520068383000
while t < END_S:
    lines["p0.log"].append(prefill_batch(t, rnd.randint(1, 3), rnd.randint(2000, 9000), rnd.randint(20000, 45000),
                                         rnd.uniform(0.2, 0.45), rnd.randint(0, 3), rnd.randint(0, 4)))
    if LINK_DOWN_S <= t < LINK_UP_S and rnd.random() < 0.5:
        room += rnd.randint(1, 10**6)
        lines["p0.log"].append(
            "[%s TP0] Prefill transfer failed for request rank=0 req.rid='%032x' req.bootstrap_room=%d with exception "
            "KVTransferError(bootstrap_room=%d): Decode instance could be dead, remote mooncake session %s is not alive"
            % (ts(t + 0.2), rnd.getrandbits(128), room, room, D_ADDR["D0"]))
    t += rnd.uniform(0.8, 1.2)
# mooncake/conn.py @ 0005973a84f7a02787e270b6be5970d3022d07fe: logger.error("Session %s failed.", ...)
# and "Session %s recovered via probe; un-blacklisted"
p0 = lines["p0.log"]
for when, text in ((LINK_DOWN_S + 3, "Session %s failed." % D_ADDR["D0"]),
                   (LINK_UP_S + 2, "Session %s recovered via probe; un-blacklisted" % D_ADDR["D0"])):
    at = next(i for i, l in enumerate(p0) if l[1:20] >= ts(when))
    p0.insert(at, "[%s TP0] %s" % (ts(when), text))

# P0's transfer engine (kvcache-ai/Mooncake mooncake-transfer-engine/src/transport/rdma_transport/
# worker_pool.cpp @ 3b5a594133958449a1feaf1c9e0fc1b553e34a28; the same lines as in
# tests/data/upstream_logs/mooncake_transfer_engine.log).
mc = lines["p0-mooncake.log"]
t = LINK_DOWN_S + 0.5
while t < LINK_UP_S:
    mc.append(glog("E", t, 140236, "worker_pool.cpp:654",
                   "Worker: Process failed for slice (opcode: 1, source_addr: 0x7f3a40000000, length: 65536, "
                   "dest_addr: 0x7f1c20000000, local_nic: mlx5_0, peer_nic: %s@mlx5_0, dest_rkey: 2099456, "
                   "retry_cnt: 0, max_retry_cnt: 8): transport retry counter exceeded" % D_ADDR["D0"]))
    if t < LINK_DOWN_S + 5:
        mc.append(glog("E", t + 0.001, 140233, "worker_pool.cpp:237",
                       "Worker: Cannot make connection for endpoint: %s@mlx5_0, mark it inactive" % D_ADDR["D0"]))
    t += rnd.uniform(2, 6)

# The same run's requests as the decode servers' --log-requests lines (--log-requests-format json), in
# files of their own so the scheduler logs above stay as they were: cluster-requests.yaml reads both.
# python/sglang/srt/utils/request_logger.py @ f82c6bdd969d4b6dfe800795c60dd5109a7ab12d:
# log_json(..., "request.finished", ...) = json.dumps({"timestamp": datetime.now().isoformat(), "event": ...});
# meta_info's keys and order: python/sglang/srt/managers/tokenizer_manager.py @ 001067fffe33427bee0ed2f007fb7551a1d76b44
# (the same line as tests/data/upstream_logs/sglang_requests.log's JSON one). Agentic sessions named by
# routing_key: each turn's prompt is the last prompt, its answer and new user tokens, and the engine
# reports as cached what it kept of the last turn (whole 64-token pages). A separate generator, so the
# files above do not change.
req_rnd = random.Random(20261207)
requests = {"d0-requests.log": [], "d1-requests.log": [], "d2-requests.log": []}


def finished(t_end, rid, session, prompt, completion, cached, e2e, throughput):
    d = T0 + datetime.timedelta(seconds=t_end)
    unix = d.replace(tzinfo=datetime.timezone.utc).timestamp()  # the log's clock taken as UTC: any machine, same bytes
    received = unix - e2e
    meta = collections.OrderedDict([
        ("id", rid), ("finish_reason", {"type": "stop", "matched": 151645}), ("prompt_tokens", prompt),
        ("weight_version", "default"), ("total_retractions", 0), ("queue_time", round(req_rnd.uniform(0.005, 0.05), 3)),
        ("reasoning_tokens", 0), ("completion_tokens", completion), ("cached_tokens", cached), ("dp_rank", None),
        ("e2e_latency", round(e2e, 3)), ("request_received_ts", round(received, 3)),
        ("request_finished_ts", round(unix, 3)), ("decode_throughput", round(throughput, 1))])
    obj = collections.OrderedDict([("rid", rid), ("stream", True), ("session_params", None),
                                   ("bootstrap_host", "10.99.91.40"), ("bootstrap_room", req_rnd.getrandbits(62)),
                                   ("routing_key", session)])
    return json.dumps({"timestamp": d.isoformat(), "event": "request.finished", "rid": rid, "obj": obj,
                       "out": {"meta_info": meta}})


def run_session(name, session, start, stop, gaps=(), turns=10**9):
    """One agentic session on one decode server from `start` until `stop` (log seconds), at most `turns`."""
    t, prompt, completion = start, 0, 0
    for _ in range(turns):
        new = req_rnd.randint(400, 3000)
        cached = ((prompt + completion) // 64) * 64 if prompt else 0
        prompt = prompt + completion + new
        completion = req_rnd.randint(80, 600)
        throughput = req_rnd.uniform(55, 90)
        e2e = req_rnd.uniform(0.05, 0.3) + (prompt - cached) / 12000.0 + completion / throughput
        if t + e2e >= stop:
            return
        if not any(a <= t + e2e < b for a, b in gaps):  # a request lost in a crash or a dead link logs nothing
            requests[name].append((t + e2e, finished(t + e2e, "%032x" % req_rnd.getrandbits(128), session, prompt,
                                                     completion, cached, e2e, throughput)))
        t += e2e + req_rnd.uniform(2, 10)  # the agent's own work between turns


for k in range(6):
    run_session("d0-requests.log", "agent-%d" % k, req_rnd.uniform(0, 20), END_S, [(LINK_DOWN_S, LINK_UP_S)])
    run_session("d1-requests.log", "agent-%d" % (6 + k), req_rnd.uniform(0, 20), CRASH_S - 2)
    run_session("d1-requests.log", "agent-%d" % (12 + k), RESTART_S + req_rnd.uniform(0, 20), END_S)
for start in range(40, END_S, 60):  # D2's stray requests, one a minute, each a session of its own
    run_session("d2-requests.log", "stray-%d" % start, start, start + 30, turns=1)
for name, timed in requests.items():
    lines[name] = [line for _, line in sorted(timed)]

for name, content in lines.items():
    with open(name, "w") as f:
        f.write("\n".join(content) + "\n")
