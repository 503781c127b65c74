#!/usr/bin/python3
"""An end-to-end play of a lab-like cluster on this machine, all through real processes and
files: a local HTTP server serves changing SGLang /metrics built from the published fixture; the
test appends scheduler log lines as SGLang writes them (a streaming-session correction and the
AssertionError crash on D0, then Mooncake transfer failures and a lost connection on P0 -> D1);
the reference router (examples/router_client.py) routes 1,000 requests through `kvscope-cli serve
--live` (its `router:` section) and reports their outcomes - the pretend cluster fails what it sends
over the dead link, as Mooncake does. The router core is told of D0's crash by the log and stops
choosing D0, but nothing tells it the P0 -> D1 link is dead, so it keeps sending there: the cascade.
The recording then shows per-D load and KV occupancy, the crash and the link failures, the
diagnosis engine names modes D and A from those mechanisms, and a knob changed through Control
reaches WatchKnobs. The test marks the calm and the storm as two runs of a live sweep (`kvscope-cli
mark`, `serve --runs`): each gets its own recording and summary, and only the storm's names D and A;
D0's silent /metrics is in the stream as a health change."""
import argparse
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import serve_process

ARGS = None
MODEL = 'model_name="meta-llama/Llama-3.1-8B-Instruct"'


def metrics_server(fixture_text):
    """Each decode worker's /metrics: the fixture with its KV use growing on every scrape; a worker
    in the returned `down` set answers 503."""
    scrapes, down = {}, set()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            worker = self.path.strip("/").split("/")[0]
            if worker in down:  # a crashed SGLang process answers nothing
                self.send_error(503)
                return
            scrapes[worker] = scrapes.get(worker, 0) + 1
            used = 20000 + 1000 * scrapes[worker] * (1 + int(worker[1:]))
            body = fixture_text.replace("sglang:num_used_tokens{%s} 123859.0" % MODEL,
                                        "sglang:num_used_tokens{%s} %d" % (MODEL, used))
            body += "sglang:max_total_num_tokens{%s} 400000\n" % MODEL
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, scrapes, down


def append(path, text):
    with open(path, "a") as f:
        f.write(text)


class LabLikeCluster(unittest.TestCase):
    def test_incident_through_metrics_logs_and_the_router(self):
        sys.path.insert(0, ARGS.stubs)
        sys.path.insert(0, ARGS.examples)
        import grpc
        from kvscope.v1 import control_pb2, control_pb2_grpc, knobs_pb2, router_pb2, router_pb2_grpc
        import router_client

        with open(os.path.join(ARGS.data, "fixtures", "sglang_metrics_sample.txt")) as f:
            fixture = f.read()
        self.assertIn("sglang:num_used_tokens{%s} 123859.0" % MODEL, fixture)
        http_server, scrapes, down = metrics_server(fixture)
        port = http_server.server_address[1]
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.addCleanup(http_server.shutdown)
        logs = {name: os.path.join(d.name, name + ".log") for name in ("p0", "d0", "d1", "d2")}
        for path in logs.values():
            append(path, "[2025-06-01 11:59:00 TP0] before the session\n")
        cluster = os.path.join(d.name, "cluster.yaml")
        with open(cluster, "w") as f:
            f.write("name: lab-like\nscrape_interval_s: 0.2\nrouter:\n  policy: kv-aware\n  knobs: {K: 200}\nworkers:\n"
                    "  - {id: P0, role: prefill, logs: p0.log, bootstrap: 10.0.0.9:8998}\n")
            for i in range(3):
                f.write("  - {id: D%d, role: decode, metrics: 'http://127.0.0.1:%d/D%d/metrics', logs: d%d.log, "
                        "mooncake: '10.0.0.%d:15295'}\n" % (i, port, i, i, i + 1))
        recording = os.path.join(d.name, "live.kvrec")
        runs = os.path.join(d.name, "runs")
        server, address = serve_process.start_serve(ARGS.cli, ["--live", cluster, "--listen", "127.0.0.1:0",
                                                               "--record", recording, "--runs", runs])

        def mark(*args):
            done = subprocess.run([ARGS.cli, "mark", address] + list(args), capture_output=True, text=True, timeout=30)
            self.assertEqual(done.returncode, 0, done.stderr)
        try:
            channel = grpc.insecure_channel(address)
            self.addCleanup(channel.close)
            watched = []
            watch = router_pb2_grpc.RouterStub(channel).WatchKnobs(router_pb2.WatchKnobsRequest())

            def read():
                try:
                    for update in watch:
                        watched.append(update)
                except grpc.RpcError:
                    pass
            threading.Thread(target=read, daemon=True).start()

            # Calm: 200 requests spread over the three decode workers.
            mark("--start", "calm", "--param", "K=200")
            calm = router_client.run(address, 200, 40, None, seed=5)
            self.assertEqual({r.worker_name for _, r, _ in calm["routed"]}, {"D0", "D1", "D2"})
            deadline = time.time() + 10  # every /metrics answered a few times before the incident
            while time.time() < deadline and min(scrapes.get(w, 0) for w in ("D0", "D1", "D2")) < 2:
                time.sleep(0.05)

            mark("--end", "calm")
            mark("--start", "storm", "--param", "K=200", "--param", "phase=incident")  # open until serve stops

            # The incident, in the logs: D0 crashes on the streaming-session invariant (and its
            # /metrics goes silent), then P0's transfers to D1 fail and D1 loses its prefill connection.
            down.add("D0")
            append(logs["d0"],
                   "[2025-06-01 12:00:01 TP0] Correcting streaming-session extend_input_len from 6648 to 0 "
                   "(rid=4a1f, session_id=1000195, fill_len=6648, prefix_len=43459, kv_committed_len=43459)\n"
                   "[2025-06-01 12:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
                   "  File \"/sgl/managers/scheduler.py\", line 2310, in event_loop_normal_disagg_decode\n"
                   "    assert seq_len - pre_len == req.extend_input_len\n"
                   "AssertionError\n")
            for i in range(12):
                append(logs["p0"], "[2025-06-01 12:00:03 TP0] Prefill transfer failed for request rank=0 "
                       "req.rid='r%d' req.bootstrap_room=%d with exception KVTransferError(bootstrap_room=%d): Decode "
                       "instance could be dead, remote mooncake session 10.0.0.2:15295 is not alive\n" % (i, 100 + i, 100 + i))
            append(logs["d1"], "[2025-06-01 12:00:04 TP0] Lost connection with prefill instance "
                   "(bootstrap_addr: 10.0.0.9:8998), 7 requests affected\n")
            deadline = time.time() + 10
            while time.time() < deadline:  # the router hears of D0's crash from the log
                probe = router_pb2_grpc.RouterStub(channel).Route(router_pb2.RouteRequest(
                    request_id=10 ** 9, session_id=10 ** 9, turn=1, input_tokens=100, candidates=["D0"]))
                if probe.worker < 0:
                    break
                time.sleep(0.1)
            self.assertLess(probe.worker, 0, "D0 is still a candidate after its crash was logged")

            # Storm: the router keeps sending fresh sessions to D1, whose link is dead.
            dead_link = "KVTransferError(bootstrap_room=0): Decode instance could be dead, remote mooncake session 10.0.0.2:15295 is not alive"
            storm = router_client.run(address, 800, 160, None, seed=6, first_request=1001, first_session=1001,
                                      outcome=lambda reply: dead_link if reply.worker_name == "D1" else None)
            chosen = {}
            for _, r, _ in storm["routed"]:
                chosen[r.worker_name] = chosen.get(r.worker_name, 0) + 1
            self.assertNotIn("D0", chosen)
            self.assertGreater(chosen.get("D1", 0), 200, chosen)

            self.assertTrue(watched)  # subscribed long ago: the state at subscription came
            control = control_pb2_grpc.ControlStub(channel)
            control.SetKnobs(control_pb2.SetKnobsRequest(
                changes=[knobs_pb2.KnobValue(name="pending_seed_budget", value=1)], who="operator"))
            deadline = time.time() + 10
            while time.time() < deadline and not any(u.who == "operator" for u in watched):
                time.sleep(0.05)
            watch.cancel()
            self.assertTrue(any(u.who == "operator" for u in watched), watched)
            time.sleep(0.6)  # a few more scrapes and snapshots
        finally:
            code, log = serve_process.stop_serve(server)
        self.assertEqual(code, 0, log)
        self.assertGreaterEqual(min(scrapes.get(w, 0) for w in ("D0", "D1", "D2")), 2, scrapes)

        report = subprocess.run([ARGS.cli, "report", recording, "--format", "json"], capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(report.returncode, 0, report.stderr)
        summary = json.loads(report.stdout)
        modes = {f["mode"] for f in summary["diagnosis"]}
        self.assertIn("D", modes, summary["diagnosis"])
        self.assertIn("A", modes, summary["diagnosis"])
        self.assertGreaterEqual(summary["worker_crashes"], 1)
        self.assertGreaterEqual(summary["link_dead_events"], 1)
        workers = {w["id"]: w for w in summary["workers"]}
        for name in ("D0", "D1", "D2"):
            self.assertGreater(workers[name]["kv_peak_frac"], 0.05, workers[name])  # from /metrics
            self.assertGreater(workers[name]["bindings"], 0, workers[name])

        # The two marked runs, each with its own files; the incident is the storm's alone.
        with open(os.path.join(runs, "runs.json")) as f:
            listed = json.load(f)
        self.assertEqual([(r["index"], r["name"]) for r in listed], [(1, "calm"), (2, "storm")])
        self.assertEqual(listed[1]["ended_by"], "session end")
        self.assertEqual(listed[1]["parameters"], [["K", "200"], ["phase", "incident"]])
        with open(os.path.join(runs, "001-calm.json")) as f:
            calm_summary = json.load(f)
        self.assertEqual(calm_summary["requests"]["total"], 200)
        self.assertFalse({f["mode"] for f in calm_summary["diagnosis"]} & {"A", "D"}, calm_summary["diagnosis"])
        storm_report = subprocess.run([ARGS.cli, "report", os.path.join(runs, "002-storm.kvrec"), "--format", "json"],
                                      capture_output=True, text=True, timeout=60)
        self.assertEqual(storm_report.returncode, 0, storm_report.stderr)
        storm_modes = {f["mode"] for f in json.loads(storm_report.stdout)["diagnosis"]}
        self.assertTrue({"A", "D"} <= storm_modes, storm_modes)

        # D0's /metrics went silent: the stream says so, with the reason (a console attached elsewhere shows it).
        events = os.path.join(d.name, "live.jsonl")
        exported = subprocess.run([ARGS.cli, "export", recording, "--format", "jsonl", "-o", events],
                                  capture_output=True, text=True, timeout=60)
        self.assertEqual(exported.returncode, 0, exported.stderr)
        with open(events) as f:
            health = [e for e in map(json.loads, f) if e.get("kind") == "health" and e.get("worker") == "D0"]
        self.assertTrue(any(h["health"] != "ok" and h["reason"] for h in health), health)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--stubs", required=True)
    parser.add_argument("--examples", required=True)
    parser.add_argument("--data", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
