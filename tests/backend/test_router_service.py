#!/usr/bin/python3
"""The Router service with a real client: the reference router (examples/router_client.py, Debian's
python3-grpcio) against `kvscope-cli serve --router`. It routes 1,000 requests and reports their
outcomes; with K=0 the shared system prompt pins every session to one worker (the cold-D pattern of
mode B, from the same kv-aware policy the simulator runs); a K=200 change made through Control
reaches WatchKnobs and spreads the next 1,000 requests. The telemetry stream and the recording hold
the decisions and observations; `report` on that recording names mode B. Bad input is refused
with the field named, and nothing is applied after it."""
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import serve_process

ARGS = None


def import_stubs():
    sys.path.insert(0, ARGS.stubs)
    sys.path.insert(0, ARGS.examples)
    global grpc, control_pb2, control_pb2_grpc, events_pb2, knobs_pb2, router_pb2, router_pb2_grpc
    global telemetry_pb2, telemetry_pb2_grpc, router_client
    import grpc
    from kvscope.v1 import (control_pb2, control_pb2_grpc, events_pb2, knobs_pb2, router_pb2, router_pb2_grpc,
                            telemetry_pb2, telemetry_pb2_grpc)
    import router_client


class RoutedCluster(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import_stubs()
        cls.dir = tempfile.TemporaryDirectory()
        cls.token = "router-test-token"
        token_file = os.path.join(cls.dir.name, "token")
        with open(token_file, "w") as f:
            f.write(cls.token + "\n")
        cls.recording = os.path.join(cls.dir.name, "live.kvrec")
        cls.server, cls.address = serve_process.start_serve(
            ARGS.cli, ["--router", "D0,D1,D2", "--prefill", "P0", "--listen", "127.0.0.1:0", "--token-file", token_file,
                       "--record", cls.recording])
        cls.channel = grpc.insecure_channel(cls.address)
        cls.auth = [("authorization", "Bearer " + cls.token)]

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        if cls.server.poll() is None:
            serve_process.stop_serve(cls.server)
        cls.dir.cleanup()

    def router(self):
        return router_pb2_grpc.RouterStub(self.channel)

    def test_1_route_report_watch_and_knob_change(self):
        first = router_client.run(self.address, 1000, 60, self.token, seed=1)
        self.assertEqual(len(first["routed"]), 1000)
        self.assertEqual(first["applied"], 3000)  # admission, blocks stored, request done per request
        per_worker = {}
        for _, reply, _ in first["routed"]:
            per_worker[reply.worker_name] = per_worker.get(reply.worker_name, 0) + 1
        # K=0 and a shared system prompt: overlap pins every new session to the first warm worker.
        self.assertGreaterEqual(per_worker.get("D0", 0), 980, per_worker)
        paths = {reply.path for _, reply, _ in first["routed"]}
        self.assertIn(events_pb2.ROUTE_PATH_SEED, paths)    # a session's first turn
        self.assertIn(events_pb2.ROUTE_PATH_DIRECT, paths)  # later turns where its cache lives
        decision = first["routed"][0][1].decision
        self.assertEqual(len(decision.candidates), 3)
        self.assertTrue(all(len(c.components) > 0 for c in decision.candidates))
        self.assertEqual(first["knob_updates"][0].who, "")  # the state at subscription

        # A knob change through Control reaches a watcher, then steers the next decisions.
        watched = []
        call = self.router().WatchKnobs(router_pb2.WatchKnobsRequest(), metadata=self.auth)
        def read():
            try:
                for update in call:
                    watched.append(update)
            except grpc.RpcError:
                pass  # cancelled below
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = time.time() + 10
        while time.time() < deadline and not watched:  # subscribed: the state at subscription came
            time.sleep(0.02)
        self.assertTrue(watched)
        control = control_pb2_grpc.ControlStub(self.channel)
        control.SetKnobs(control_pb2.SetKnobsRequest(changes=[knobs_pb2.KnobValue(name="K", value=200)], who="test"),
                         metadata=self.auth)
        deadline = time.time() + 10
        while time.time() < deadline and not any(u.who == "test" for u in watched):
            time.sleep(0.05)
        call.cancel()
        changed = [u for u in watched if u.who == "test"]
        self.assertEqual(len(changed), 1, watched)
        self.assertEqual({k.name: k.value for k in changed[0].knobs}["K"], 200)
        self.assertEqual(changed[0].policy, "kv-aware")

        # New sessions spread; the old ones stay where their cache is (the sticky bonus).
        second = router_client.run(self.address, 1000, 60, self.token, seed=2, first_request=1001, first_session=1001)
        spread = {}
        for _, reply, _ in second["routed"]:
            spread[reply.worker_name] = spread.get(reply.worker_name, 0) + 1
        for name in ("D1", "D2"):
            self.assertGreater(spread.get(name, 0), 100, spread)

        # Everything is in the telemetry stream, in order, with KVScope's sequence numbers.
        telemetry = telemetry_pb2_grpc.TelemetryStub(self.channel)
        kinds = {}
        # --token-file guards the run's stream too: no token, no events.
        with self.assertRaises(grpc.RpcError) as anonymous:
            next(iter(telemetry.Subscribe(telemetry_pb2.SubscribeRequest(from_seq=0), timeout=10)))
        self.assertEqual(anonymous.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        with self.assertRaises(grpc.RpcError) as anonymous_state:
            telemetry.GetState(telemetry_pb2.GetStateRequest(), timeout=10)
        self.assertEqual(anonymous_state.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        for message in telemetry.Subscribe(telemetry_pb2.SubscribeRequest(from_seq=0), timeout=10, metadata=self.auth):
            if message.HasField("event"):
                kind = message.event.WhichOneof("payload")
                kinds[kind] = kinds.get(kind, 0) + 1
                # The router's ticker snapshots once a second of wall time: a fast run may finish
                # its 2,000 requests before the first one, so wait for it (the stream's 10 s deadline).
                if kinds.get("request_done", 0) == 2000 and kinds.get("route", 0) == 2000 and kinds.get("snapshot", 0) >= 1:
                    break
        self.assertEqual(kinds.get("run_started"), 1)
        self.assertEqual(kinds.get("route"), 2000)
        self.assertEqual(kinds.get("admission"), 2000)
        self.assertEqual(kinds.get("request_done"), 2000)
        self.assertEqual(kinds.get("knob"), 1)
        self.assertGreaterEqual(kinds.get("snapshot", 0), 1)

    def test_2_bad_input_is_refused_with_the_field(self):
        router = self.router()
        with self.assertRaises(grpc.RpcError) as refused:
            router.Route(router_pb2.RouteRequest(request_id=1, session_id=1, turn=1, input_tokens=10))
        self.assertEqual(refused.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        with self.assertRaises(grpc.RpcError) as bad:
            router.Route(router_pb2.RouteRequest(request_id=1, session_id=1, turn=1, input_tokens=10, candidates=["D9"]),
                         metadata=self.auth)
        self.assertEqual(bad.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("candidates[0]", bad.exception.details())
        ev = events_pb2.Event

        def report(*observations):
            return router.Report(iter(observations), metadata=self.auth)

        good = router_pb2.Observation(event=ev(restart=events_pb2.WorkerRestarted(worker=1)))
        with self.assertRaises(grpc.RpcError) as wrong_worker:
            report(good, router_pb2.Observation(event=ev(admission=events_pb2.Admission(
                request=5, session=5, worker=7, result=events_pb2.ADMISSION_RESULT_ADMITTED, path=events_pb2.ROUTE_PATH_SEED))))
        self.assertEqual(wrong_worker.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("observation 1: admission.worker: 7 is not a decode worker", wrong_worker.exception.details())
        with self.assertRaises(grpc.RpcError) as not_an_observation:
            report(router_pb2.Observation(event=ev(route=events_pb2.RouteDecision(request=1, chosen=0))))
        self.assertIn("KVScope's own", not_an_observation.exception.details())
        with self.assertRaises(grpc.RpcError) as empty:
            report(router_pb2.Observation())
        self.assertIn("observation 0: kind", empty.exception.details())
        self.assertEqual(report(good).applied, 1)
        # Exactly one authorization header: a right one beside a wrong one is no way to guess.
        with self.assertRaises(grpc.RpcError) as two_headers:
            router.Route(router_pb2.RouteRequest(request_id=1, session_id=1, turn=1, input_tokens=10),
                         metadata=[("authorization", "Bearer guess")] + self.auth)
        self.assertEqual(two_headers.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        # A sequence number no run reaches is refused, not taken for "from now on".
        with self.assertRaises(grpc.RpcError) as beyond:
            next(iter(telemetry_pb2_grpc.TelemetryStub(self.channel).Subscribe(
                telemetry_pb2.SubscribeRequest(from_seq=2**64 - 1), timeout=10, metadata=self.auth)))
        self.assertEqual(beyond.exception.code(), grpc.StatusCode.OUT_OF_RANGE)
        self.assertIn("from_seq: 18446744073709551615", beyond.exception.details())
        # A live cluster runs at its own pace.
        with self.assertRaises(grpc.RpcError) as pause:
            control_pb2_grpc.ControlStub(self.channel).Pause(control_pb2.PauseRequest(), metadata=self.auth)
        self.assertEqual(pause.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)

    def test_2_token_ids_are_hashed_as_dynamo_hashes_them(self):
        # The client sends token ids; KVScope hashes them (XXH3-64, seed 1337, chained per block, as
        # Dynamo's KV router does), so blocks reported under the same hashes are found: D2 holds the
        # first two blocks of these tokens, and the overlap the router sees there is 2 of the 3 blocks.
        import struct
        import xxhash
        router = self.router()
        block_size = router.GetCluster(router_pb2.GetClusterRequest(), metadata=self.auth).block_size
        tokens = list(range(151643, 151643 + 3 * block_size))
        hashes = []
        for i in range(0, len(tokens) - block_size + 1, block_size):
            local = xxhash.xxh3_64_intdigest(struct.pack("<%dI" % block_size, *tokens[i:i + block_size]), seed=1337)
            hashes.append(local if not hashes else
                          xxhash.xxh3_64_intdigest(struct.pack("<2Q", hashes[-1], local), seed=1337))
        stored = router_pb2.Observation(blocks_stored=router_pb2.BlocksStored(
            worker=2, session=4242, block_hashes=hashes[:2]))
        self.assertEqual(router.Report(iter([stored]), metadata=self.auth).applied, 1)
        reply = router.Route(router_pb2.RouteRequest(request_id=4242, session_id=4243, turn=1, token_ids=tokens),
                             metadata=self.auth)
        overlap = {c.worker: {k.name: k.value for k in c.components}["overlap"] for c in reply.decision.candidates}
        self.assertEqual(overlap[2], 2, overlap)  # blocks: the first 2 of the prompt's 3
        self.assertEqual(overlap[0], 0, overlap)
        with self.assertRaises(grpc.RpcError) as both:
            router.Route(router_pb2.RouteRequest(request_id=4244, session_id=4244, turn=1, token_ids=tokens,
                                                 block_hashes=hashes), metadata=self.auth)
        self.assertEqual(both.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("token_ids: give block_hashes or token_ids, not both", both.exception.details())

    def test_2_run_markers(self):
        # A sweep script splits the live session into runs through Control.MarkRun.
        control = control_pb2_grpc.ControlStub(self.channel)
        start = control_pb2.MarkRunRequest(action=events_pb2.RUN_MARK_ACTION_START, name="k200", who="sweep.sh",
                                           parameters=[events_pb2.RunParameter(name="K", value="200"),
                                                       events_pb2.RunParameter(name="seed", value="3")])
        with self.assertRaises(grpc.RpcError) as anonymous:
            control.MarkRun(start)
        self.assertEqual(anonymous.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        twice = control_pb2.MarkRunRequest(action=events_pb2.RUN_MARK_ACTION_START, name="x",
                                           parameters=[events_pb2.RunParameter(name="K", value="1"),
                                                       events_pb2.RunParameter(name="K", value="2")])
        with self.assertRaises(grpc.RpcError) as bad:
            control.MarkRun(twice, metadata=self.auth)
        self.assertEqual(bad.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("parameters[1].name: 'K' given twice", bad.exception.details())
        with self.assertRaises(grpc.RpcError) as nothing_open:
            control.MarkRun(control_pb2.MarkRunRequest(action=events_pb2.RUN_MARK_ACTION_END), metadata=self.auth)
        self.assertEqual(nothing_open.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)

        first_seq = telemetry_pb2_grpc.TelemetryStub(self.channel).GetState(
            telemetry_pb2.GetStateRequest(), metadata=self.auth).last_seq + 1
        started = control.MarkRun(start, metadata=self.auth)
        self.assertEqual([(m.action, m.index, m.name) for m in started.applied],
                         [(events_pb2.RUN_MARK_ACTION_START, 1, "k200")])
        ended = control.MarkRun(control_pb2.MarkRunRequest(action=events_pb2.RUN_MARK_ACTION_END, name="k200"),
                                metadata=self.auth)
        self.assertEqual(ended.applied[0].index, 1)
        self.assertEqual([(p.name, p.value) for p in ended.applied[0].parameters], [("K", "200"), ("seed", "3")])
        # Both markers are in the telemetry stream, with their author.
        stream = telemetry_pb2_grpc.TelemetryStub(self.channel).Subscribe(
            telemetry_pb2.SubscribeRequest(from_seq=first_seq, kinds=["run_mark"]), timeout=10, metadata=self.auth)
        marks = []
        for message in stream:
            marks.append(message.event.run_mark)
            if len(marks) == 2:
                stream.cancel()
                break
        self.assertEqual([m.action for m in marks], [events_pb2.RUN_MARK_ACTION_START, events_pb2.RUN_MARK_ACTION_END])
        self.assertEqual(marks[0].who, "sweep.sh")

    def test_3_recordings_report_the_run(self):
        code, log = serve_process.stop_serve(self.server)
        self.assertEqual(code, 0, log)
        report = subprocess.run([ARGS.cli, "report", self.recording], capture_output=True, text=True, timeout=60)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("scenario live", report.stdout)
        self.assertIn("2000 total, 2000 completed", report.stdout)
        # K=200 came in time: over the whole run no worker starved.
        self.assertIn("no known failure mode", report.stdout)

        # The recording is a workload: the twin runs the router's traffic (its sessions, sizes and the
        # block hashes the router saw), and the twin's own recording of that runs the same again.
        def twin(trace, record=None):
            args = [ARGS.cli, "simulate", "--trace", trace, "--scenario", "e3-load-floor", "--quiet",
                    "--format", "json"] + (["--record", record] if record else [])
            run = subprocess.run(args, capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            summary = json.loads(run.stdout)
            summary.pop("wall_seconds", None)
            return summary
        again = os.path.join(self.dir.name, "twin.kvrec")
        first = twin(self.recording, again)
        # Every request routed, the client's 2,000 and test_2's own.
        self.assertGreaterEqual(first["requests"]["total"], 2000, first["requests"])
        self.assertNotIn("source_notes", first)  # the router saw every prompt's blocks: nothing modelled
        self.assertEqual(twin(again), first)

        # Left at K=0, the same router starves two workers, and the diagnosis engine says so.
        recording = os.path.join(self.dir.name, "cold.kvrec")
        server, address = serve_process.start_serve(ARGS.cli, ["--router", "D0,D1,D2", "--listen", "127.0.0.1:0",
                                                               "--record", recording])
        try:
            router_client.run(address, 300, 30, None, seed=3)
        finally:
            code, log = serve_process.stop_serve(server)
        self.assertEqual(code, 0, log)
        cold = subprocess.run([ARGS.cli, "report", recording], capture_output=True, text=True, timeout=60)
        self.assertEqual(cold.returncode, 0, cold.stderr)
        self.assertIn("Cold-D", cold.stdout)
        self.assertIn("starving: D1", cold.stdout)


class LiveClusterWithRouter(unittest.TestCase):
    """`serve --live` with a `router:` section: the router's decisions and observations join the
    cluster's one stream (with its logs and metrics), and its knobs are the run's."""

    def test_router_in_a_live_cluster(self):
        import_stubs()
        with tempfile.TemporaryDirectory() as d:
            for name in ("d0", "d1", "d2"):
                open(os.path.join(d, name + ".log"), "w").close()
            cluster = os.path.join(d, "cluster.yaml")
            with open(cluster, "w") as f:
                f.write("name: lab\nrouter:\n  policy: kv-aware\n  knobs: {K: 200}\nworkers:\n" +
                        "".join("  - {id: D%d, role: decode, logs: [d%d.log]}\n" % (i, i) for i in range(3)))
            server, address = serve_process.start_serve(ARGS.cli, ["--live", cluster, "--listen", "127.0.0.1:0"])
            try:
                with grpc.insecure_channel(address) as channel:
                    got = router_pb2_grpc.RouterStub(channel).GetCluster(router_pb2.GetClusterRequest())
                    self.assertEqual([w.name for w in got.workers], ["D0", "D1", "D2"])
                    self.assertEqual({k.name: k.value for k in got.knobs}["K"], 200)
                    run = router_client.run(address, 300, 30, None, seed=4)
                    self.assertEqual(len(run["routed"]), 300)
                    self.assertEqual(run["applied"], 900)
                    spread = {reply.worker_name for _, reply, _ in run["routed"]}
                    self.assertEqual(spread, {"D0", "D1", "D2"})  # K=200 from the cluster file
                    control = control_pb2_grpc.ControlStub(channel)
                    control.SetPolicy(control_pb2.SetPolicyRequest(policy="exclusive-overlap", who="test"))
                    kinds = {}
                    stream = telemetry_pb2_grpc.TelemetryStub(channel).Subscribe(
                        telemetry_pb2.SubscribeRequest(from_seq=0), timeout=10)
                    for message in stream:
                        e = message.event
                        kind = e.WhichOneof("payload")
                        kinds[kind] = kinds.get(kind, 0) + 1
                        if kind == "run_started":
                            self.assertEqual(e.run_started.scenario, "live lab")
                            self.assertEqual(e.run_started.policy, "kv-aware")
                        if kind == "policy":
                            break
                    self.assertEqual(kinds.get("run_started"), 1)
                    self.assertEqual(kinds.get("route"), 300)
                    self.assertEqual(kinds.get("request_done"), 300)
                    self.assertEqual(kinds.get("policy"), 1)
            finally:
                code, log = serve_process.stop_serve(server)
            self.assertEqual(code, 0, log)
            self.assertIn("serving the Router service", log)


class UnixSocketListener(unittest.TestCase):
    """`serve --router --listen unix:PATH`, for a router on the same host. Python's
    grpcio connects to the socket, routes and reports; the socket file is only its owner's and goes
    away with the server."""

    def test_route_over_a_unix_socket(self):
        import_stubs()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "router.sock")
            server, address = serve_process.start_serve(ARGS.cli, ["--router", "D0,D1,D2", "--listen", "unix:" + path])
            try:
                self.assertEqual(address, "unix:" + path)
                mode = os.stat(path).st_mode
                self.assertTrue(stat.S_ISSOCK(mode))
                self.assertEqual(mode & (stat.S_IWGRP | stat.S_IWOTH), 0, oct(mode))  # no one else may connect
                run = router_client.run(address, 200, 20, None, seed=5)
                self.assertEqual(len(run["routed"]), 200)
                with grpc.insecure_channel(address) as channel:
                    got = router_pb2_grpc.RouterStub(channel).GetCluster(router_pb2.GetClusterRequest())
                    self.assertEqual([w.name for w in got.workers], ["D0", "D1", "D2"])
            finally:
                code, log = serve_process.stop_serve(server)
            self.assertEqual(code, 0, log)
            self.assertFalse(os.path.exists(path), "the socket file outlived the server")


class KilledRouter(unittest.TestCase):
    """A router killed outright (SIGKILL: no clean close, no index) right after its client's Report
    call ended keeps what it was told: the recording, and a marked run's recording under --runs,
    were written out when the Report call ended, not left in a buffer. The frames are read back
    with `export`, whose reader rebuilds the index of an unclosed recording."""

    def kinds_in(self, recording):
        out = subprocess.run([ARGS.cli, "export", recording, "--format", "jsonl", "-o", "-"], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        kinds = {}
        for line in out.stdout.splitlines():
            kind = json.loads(line)["kind"]
            kinds[kind] = kinds.get(kind, 0) + 1
        return kinds

    def test_a_report_is_on_disk_when_its_call_ends(self):
        import_stubs()
        with tempfile.TemporaryDirectory() as d:
            recording, runs = os.path.join(d, "live.kvrec"), os.path.join(d, "runs")
            server, address = serve_process.start_serve(
                ARGS.cli, ["--router", "D0,D1,D2", "--listen", "127.0.0.1:0", "--record", recording, "--runs", runs])
            try:
                with grpc.insecure_channel(address) as channel:
                    control_pb2_grpc.ControlStub(channel).MarkRun(
                        control_pb2.MarkRunRequest(action=events_pb2.RUN_MARK_ACTION_START, name="calm"))
                run = router_client.run(address, 300, 30, None, seed=6)
                self.assertEqual(run["applied"], 900)
            finally:
                server.kill()  # at once: well inside the 1 s snapshot tick
                server.communicate(timeout=30)
            kinds = self.kinds_in(recording)
            self.assertEqual(kinds.get("route"), 300, kinds)
            self.assertEqual(kinds.get("request_done"), 300, kinds)
            partial = os.path.join(runs, ".001-calm.kvrec.partial")  # the open run, under its hidden name
            self.assertTrue(os.path.exists(partial), os.listdir(runs))
            kinds = self.kinds_in(partial)
            self.assertEqual(kinds.get("request_done"), 300, kinds)


class HostileReports(unittest.TestCase):
    """A Report observation with a huge text field becomes a bounded event
    (cut with a marker) that a subscriber with gRPC's default limits still receives; numbers out of
    range are refused with INVALID_ARGUMENT naming the observation's index and field, and nothing
    after them is applied; stored blocks cannot overfill a worker."""

    def test_hostile_observations(self):
        import_stubs()
        with tempfile.TemporaryDirectory() as d:
            recording = os.path.join(d, "hostile.kvrec")
            # 100 blocks of 24 tokens per worker.
            server, address = serve_process.start_serve(
                ARGS.cli, ["--router", "D0,D1", "--listen", "127.0.0.1:0", "--kv-capacity", "2400", "--record", recording,
                           "--max-subscribers", "2"])
            try:
                self.check(address)
            finally:
                code, log = serve_process.stop_serve(server)
            self.assertEqual(code, 0, log)
            report = subprocess.run([ARGS.cli, "report", recording, "--format", "json"], capture_output=True, text=True,
                                    timeout=60)
            self.assertEqual(report.returncode, 0, report.stderr)
            summary = json.loads(report.stdout)
            self.assertEqual(summary["aborted_requests"], 3)
            self.assertTrue(all(w["tokens_served"] >= 0 for w in summary["workers"]))

    def test_token_without_tls_is_warned(self):
        with tempfile.TemporaryDirectory() as d:
            token_file = os.path.join(d, "token")
            with open(token_file, "w") as f:
                f.write("a-long-enough-token\n")
            server, _ = serve_process.start_serve(
                ARGS.cli, ["--router", "D0", "--listen", "0.0.0.0:0", "--token-file", token_file])
            code, log = serve_process.stop_serve(server)
            self.assertEqual(code, 0, log)
            self.assertIn("without TLS: the token travels in clear", log)

    def check_subscriber_limit(self, channel):
        # Two streams open (--max-subscribers 2): a third is refused; once one leaves, there is room.
        telemetry = telemetry_pb2_grpc.TelemetryStub(channel)
        streams = [telemetry.Subscribe(telemetry_pb2.SubscribeRequest(from_seq=0), timeout=30) for _ in range(2)]
        for stream in streams:
            next(iter(stream))  # subscribed: RunStarted arrived
        with self.assertRaises(grpc.RpcError) as full:
            next(iter(telemetry.Subscribe(telemetry_pb2.SubscribeRequest(from_seq=0), timeout=10)))
        self.assertEqual(full.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("--max-subscribers", full.exception.details())
        streams[0].cancel()
        deadline = time.time() + 10
        while True:
            try:
                third = telemetry.Subscribe(telemetry_pb2.SubscribeRequest(from_seq=0), timeout=10)
                next(iter(third))
                third.cancel()
                break
            except grpc.RpcError as e:
                self.assertEqual(e.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
                self.assertLess(time.time(), deadline, "the cancelled stream never made room")
                time.sleep(0.1)
        streams[1].cancel()

    def check(self, address):
        ev = events_pb2.Event
        with grpc.insecure_channel(address) as channel:  # gRPC's default 4 MiB receive limit
            self.check_subscriber_limit(channel)
            router = router_pb2_grpc.RouterStub(channel)

            def report(*observations):
                return router.Report(iter(observations))

            # Nearly 4 MiB of traceback: applied, but as a capped event with a marker.
            traceback = "Traceback (most recent call last):\n" + "x" * (4 * 1024 * 1024 - 8192) + "\nRuntimeError: boom"
            crash = router_pb2.Observation(event=ev(crash=events_pb2.WorkerCrashed(worker=0, reason=traceback,
                                                                                     aborted_requests=3)))
            self.assertEqual(report(crash).applied, 1)
            stream = telemetry_pb2_grpc.TelemetryStub(channel).Subscribe(
                telemetry_pb2.SubscribeRequest(from_seq=0, kinds=["crash"]), timeout=10)
            got = next(iter(stream)).event.crash
            stream.cancel()
            self.assertLessEqual(len(got.reason), 16 * 1024)
            self.assertIn("bytes cut ...]", got.reason)
            self.assertTrue(got.reason.endswith("RuntimeError: boom"))

            good = router_pb2.Observation(event=ev(restart=events_pb2.WorkerRestarted(worker=0)))
            SESSION = events_pb2.EVICTION_GRANULARITY_SESSION
            bad = [
                (ev(admission=events_pb2.Admission(request=1, session=1, worker=0, tokens=-5,
                                                   result=events_pb2.ADMISSION_RESULT_ADMITTED,
                                                   path=events_pb2.ROUTE_PATH_SEED)),
                 "observation 1: admission.tokens: -5 is negative"),
                (ev(eviction=events_pb2.Eviction(worker=0, session=1, tokens_freed=-2**63, granularity=SESSION)),
                 "observation 1: eviction.tokens_freed: -9223372036854775808 is negative"),
                (ev(crash=events_pb2.WorkerCrashed(worker=1, aborted_requests=-2**31)),
                 "observation 1: crash.aborted_requests: -2147483648 is negative"),
                (ev(request_done=events_pb2.RequestDone(request=1, session=1, worker=0, ttft_us=-7, e2e_us=10,
                                                        path=events_pb2.ROUTE_PATH_DIRECT,
                                                        status=events_pb2.REQUEST_STATUS_OK)),
                 "observation 1: request_done.ttft_us: -7 is below -1"),
                (ev(eviction=events_pb2.Eviction(worker=0, session=1, tokens_freed=10**9, granularity=SESSION)),
                 "observation 1: eviction.tokens_freed: 1000000000 is over the worker's KV capacity (2400)"),
            ]
            for event, message in bad:
                with self.assertRaises(grpc.RpcError) as refused:
                    report(good, router_pb2.Observation(event=event), good)
                self.assertEqual(refused.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
                self.assertIn(message, refused.exception.details())

            # 100 blocks fit D0's 2,400 tokens; the 101st is refused, naming the worker and its capacity.
            self.assertEqual(report(router_pb2.Observation(blocks_stored=router_pb2.BlocksStored(
                worker=0, session=1, block_hashes=list(range(1, 101))))).applied, 1)
            with self.assertRaises(grpc.RpcError) as full:
                report(router_pb2.Observation(blocks_stored=router_pb2.BlocksStored(
                    worker=0, session=1, block_hashes=[101])))
            self.assertEqual(full.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("observation 0: blocks_stored.block_hashes: 1 new blocks would make D0 hold 2424 tokens, "
                          "over its KV capacity of 2400", full.exception.details())


if __name__ == "__main__":
    serve_process.test_main(sys.modules[__name__], "--stubs", "--examples")
