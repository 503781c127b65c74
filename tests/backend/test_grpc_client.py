#!/usr/bin/python3
"""A real, independent gRPC client (Debian's python3-grpcio, stubs generated at build time from the
project's protos) against `kvscope-cli serve`: reflection lists the services, health answers, a
subscriber follows the run, a knob change made with the bearer token shows up as an event and in
later snapshots, and control calls without the token are refused and change nothing. Against
`serve --replay`: the state comes from the recording, pause and seek are events with their author,
a seek restates the run for subscribers, and knob changes are refused."""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import serve_process
from serve_process import stop_serve

ARGS = None


def stubs():
    sys.path.insert(0, ARGS.stubs)
    import grpc  # noqa: F401
    from kvscope.v1 import control_pb2, control_pb2_grpc, knobs_pb2, telemetry_pb2, telemetry_pb2_grpc
    import reflection_client_pb2
    import reflection_client_pb2_grpc
    return (grpc, control_pb2, control_pb2_grpc, knobs_pb2, telemetry_pb2, telemetry_pb2_grpc,
            reflection_client_pb2, reflection_client_pb2_grpc)


def start_serve(args):
    return serve_process.start_serve(ARGS.cli, args)


class Follower:
    """Subscribes on a thread and keeps every event it receives."""

    def __init__(self, test, from_seq=0):
        self.test = test
        self.events = []
        self.lock = threading.Lock()
        self.stream = test.telemetry.Subscribe(test.telemetry_pb2.SubscribeRequest(from_seq=from_seq))
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self):
        try:
            for message in self.stream:
                if message.HasField("event"):
                    with self.lock:
                        self.events.append(message.event)
        except self.test.grpc.RpcError as e:  # cancelled by us, or the channel closing at teardown
            if e.code() != self.test.grpc.StatusCode.CANCELLED:
                raise

    def wait_for(self, predicate, timeout=60):
        """The index of the first event satisfying `predicate`, waiting for it (generously)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                for i, e in enumerate(self.events):
                    if predicate(e):
                        return i
            time.sleep(0.05)
        raise AssertionError("no such event within %s s" % timeout)

    def snapshot(self):
        with self.lock:
            return list(self.events)

    def close(self):
        self.stream.cancel()
        self.thread.join(timeout=10)


class ServedRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        (cls.grpc, cls.control_pb2, cls.control_grpc, cls.knobs_pb2, cls.telemetry_pb2, cls.telemetry_grpc,
         cls.reflection_pb2, cls.reflection_grpc) = stubs()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.token = "s3cret-token-for-tests"
        token_file = os.path.join(cls.tmp.name, "token")
        with open(token_file, "w") as f:
            f.write(cls.token + "\n")
        # Paced at 50x: the 300 s start window of e3 takes 6 s of wall time, time to steer it.
        cls.server = subprocess.Popen(
            [ARGS.cli, "serve", "--scenario", "e3-load-floor", "--listen", "127.0.0.1:0", "--token-file", token_file,
             "--open-telemetry", "--speed", "50", "--duration", "1200"],  # the token guards Control only
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = cls.server.stdout.readline()
        if not line.startswith("listening on "):
            cls.server.kill()
            raise RuntimeError("serve did not start: %r %s" % (line, cls.server.stderr.read()))
        cls.address = line.split()[-1]
        cls.channel = cls.grpc.insecure_channel(cls.address)
        cls.grpc.channel_ready_future(cls.channel).result(timeout=30)
        cls.telemetry = cls.telemetry_grpc.TelemetryStub(cls.channel)
        cls.control = cls.control_grpc.ControlStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.server.send_signal(signal.SIGINT)
        try:
            code = cls.server.wait(timeout=30)
        finally:
            if cls.server.poll() is None:
                cls.server.kill()
        cls.tmp.cleanup()
        assert code == 0, "serve exited %s on SIGINT" % code

    def auth(self, token=None):
        return (("authorization", "Bearer " + (token or self.token)),)

    def test_1_reflection_lists_the_services(self):
        stub = self.reflection_grpc.ServerReflectionStub(self.channel)
        request = self.reflection_pb2.ServerReflectionRequest(list_services="")
        replies = list(stub.ServerReflectionInfo(iter([request]), timeout=10))
        names = {s.name for r in replies for s in r.list_services_response.service}
        for expected in ("kvscope.v1.Telemetry", "kvscope.v1.Control", "grpc.health.v1.Health"):
            self.assertIn(expected, names)

    def test_2_health_is_serving(self):
        # grpc.health.v1.Health/Check with an empty request; SERVING is status 1 (field 1, varint).
        check = self.channel.unary_unary("/grpc.health.v1.Health/Check")
        self.assertEqual(check(b"", timeout=10), b"\x08\x01")

    def test_3_control_without_token_is_refused_and_changes_nothing(self):
        request = self.control_pb2.SetKnobsRequest(changes=[self.knobs_pb2.KnobValue(name="K", value=7)])
        for metadata in ((), self.auth("wrong-token")):
            with self.assertRaises(self.grpc.RpcError) as caught:
                self.control.SetKnobs(request, metadata=metadata, timeout=10)
            self.assertEqual(caught.exception.code(), self.grpc.StatusCode.UNAUTHENTICATED)
        state = self.telemetry.GetState(self.telemetry_pb2.GetStateRequest(), timeout=10)
        knobs = {k.name: k.value for k in state.knobs}
        self.assertEqual(knobs.get("K"), 200.0)

    def test_4_bad_values_are_invalid_arguments(self):
        for name, value in (("no_such_knob", 1), ("rho", 7), ("session_soft_cap", 2.5)):
            request = self.control_pb2.SetKnobsRequest(changes=[self.knobs_pb2.KnobValue(name=name, value=value)])
            with self.assertRaises(self.grpc.RpcError) as caught:
                self.control.SetKnobs(request, metadata=self.auth(), timeout=10)
            self.assertEqual(caught.exception.code(), self.grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn(name, caught.exception.details())

    def test_5_knob_change_is_an_event_and_changes_the_run(self):
        events = []
        stop = threading.Event()

        def follow():
            stream = self.telemetry.Subscribe(self.telemetry_pb2.SubscribeRequest(from_seq=0, kinds=["knob", "snapshot"]))
            try:
                for message in stream:
                    if message.HasField("event"):
                        events.append(message.event)
                    if stop.is_set():
                        stream.cancel()
                        break
            except self.grpc.RpcError as e:  # cancelled by us, or the channel closing at teardown
                if e.code() != self.grpc.StatusCode.CANCELLED:
                    raise

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        request = self.control_pb2.SetKnobsRequest(changes=[self.knobs_pb2.KnobValue(name="K", value=0)],
                                                   who="python-test")
        reply = self.control.SetKnobs(request, metadata=self.auth(), timeout=10)
        self.assertEqual([(c.name, c.new_value) for c in reply.applied], [("K", 0.0)])
        # Let the rest of the 300 s start window run (6 s at 50x), then look at the bindings.
        deadline = time.time() + 30
        while time.time() < deadline:
            snapshots = [e for e in events if e.WhichOneof("payload") == "snapshot"]
            if snapshots and snapshots[-1].time_us > 320e6:
                break
            time.sleep(0.2)
        stop.set()
        follower.join(timeout=10)
        changes = [e.knob for e in events if e.WhichOneof("payload") == "knob"]
        self.assertTrue(any(c.name == "K" and c.new_value == 0 and "python-test" in c.who for c in changes), changes)
        # Beside the label this client chose, where the change really came from.
        mine = [c for c in changes if c.who == "python-test"]
        self.assertTrue(mine and all(c.origin.peer.startswith("127.0.0.1:") and c.origin.identity == "token"
                                     for c in mine), mine)
        change_time = min(e.time_us for e in events if e.WhichOneof("payload") == "knob")
        late = [e.snapshot for e in events if e.WhichOneof("payload") == "snapshot" and e.time_us > 320e6]
        self.assertTrue(late, "no snapshot after the start window")
        bindings = {g.worker: g.bindings for g in late[-1].workers}
        # With K=0 from early on, fresh sessions follow the warm D (overlap pinning): D2 falls behind.
        # (With K=200 kept, e3 binds 16-17 sessions to every D.)
        self.assertLess(change_time, 300e6)
        self.assertGreater(bindings[0] + bindings[1], 3 * bindings[2], bindings)

    def test_6_preview_forks_the_run_and_changes_nothing(self):
        state = lambda: {k.name: k.value for k in
                         self.telemetry.GetState(self.telemetry_pb2.GetStateRequest(), timeout=10).knobs}
        before = state()
        request = self.control_pb2.PreviewRequest(changes=[self.knobs_pb2.KnobValue(name="K", value=50)],
                                                  horizon_s=120, who="python-test")
        reply = self.control.Preview(request, metadata=self.auth(), timeout=60)
        self.assertEqual(reply.to_us - reply.from_us, 120_000_000)
        self.assertGreater(reply.wall_ms, 0)
        for future in (reply.baseline, reply.changed):
            self.assertEqual(future.error, "")
            self.assertEqual(list(future.workers), ["D0", "D1", "D2"])
            gauges = {g.gauge: list(g.workers) for g in future.per_worker}
            self.assertTrue({"kv_fraction", "resident_sessions", "queued", "admitted"} <= set(gauges), gauges.keys())
            for name, workers in gauges.items():
                self.assertEqual(len(workers), 3, name)
            for i, series in enumerate(gauges["kv_fraction"] + gauges["resident_sessions"]):
                self.assertTrue(series.time_us, "series %d is empty" % i)
                self.assertEqual(len(series.time_us), len(series.value))
                self.assertEqual(len(series.time_us), len(series.peak))
                self.assertEqual(list(series.time_us), sorted(series.time_us))
                self.assertTrue(reply.from_us <= series.time_us[0] and series.time_us[-1] <= reply.to_us)
            for series in gauges["kv_fraction"]:
                self.assertTrue(all(0 <= v <= 1.0001 for v in series.value), list(series.value)[:5])
            self.assertEqual(sum(w.share for w in future.horizon.workers if w.role == "decode") > 0,
                             sum(w.bindings for w in future.horizon.workers) > 0)
        self.assertEqual(state(), before)  # a preview is not a change
        bad = self.control_pb2.PreviewRequest(changes=[self.knobs_pb2.KnobValue(name="K", value=50)], horizon_s=7200)
        with self.assertRaises(self.grpc.RpcError) as caught:
            self.control.Preview(bad, metadata=self.auth(), timeout=10)
        self.assertEqual(caught.exception.code(), self.grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("horizon_s", caught.exception.details())
        with self.assertRaises(self.grpc.RpcError) as caught:
            self.control.Preview(request, timeout=10)
        self.assertEqual(caught.exception.code(), self.grpc.StatusCode.UNAUTHENTICATED)


class ServedReplay(unittest.TestCase):
    """`kvscope-cli serve --replay` around a recording that `simulate --record` wrote."""

    @classmethod
    def setUpClass(cls):
        (cls.grpc, cls.control_pb2, cls.control_grpc, cls.knobs_pb2, cls.telemetry_pb2, cls.telemetry_grpc,
         _, _) = stubs()
        from kvscope.v1 import events_pb2
        cls.events_pb2 = events_pb2
        cls.tmp = tempfile.TemporaryDirectory()
        cls.recording = os.path.join(cls.tmp.name, "run.kvrec")
        subprocess.run([ARGS.cli, "simulate", "--scenario", "e3-load-floor", "--duration", "600", "--record",
                        cls.recording, "--format", "json"], check=True, capture_output=True, timeout=600)
        cls.token = "replay-token"
        token_file = os.path.join(cls.tmp.name, "token")
        with open(token_file, "w") as f:
            f.write(cls.token + "\n")
        # Real time: the 600 s recording outlasts the test, so the replay is still going when steered.
        cls.server, cls.address = start_serve(["--replay", cls.recording, "--listen", "127.0.0.1:0",
                                               "--token-file", token_file, "--open-telemetry", "--speed", "1"])
        cls.channel = cls.grpc.insecure_channel(cls.address)
        cls.grpc.channel_ready_future(cls.channel).result(timeout=30)
        cls.telemetry = cls.telemetry_grpc.TelemetryStub(cls.channel)
        cls.control = cls.control_grpc.ControlStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        code, err = stop_serve(cls.server)
        cls.tmp.cleanup()
        assert code == 0, "serve --replay exited %s on SIGINT: %s" % (code, err)

    def auth(self):
        return (("authorization", "Bearer " + self.token),)

    def kind(self, e):
        return e.WhichOneof("payload")

    def test_1_state_comes_from_the_recording(self):
        state = self.telemetry.GetState(self.telemetry_pb2.GetStateRequest(), timeout=10)
        self.assertEqual(state.run.scenario, "e3-load-floor")
        self.assertEqual(state.policy, "kv-aware")
        self.assertEqual({k.name: k.value for k in state.knobs}.get("K"), 200.0)
        self.assertEqual(state.speed, 1.0)

    def test_2_knob_and_policy_changes_are_refused(self):
        request = self.control_pb2.SetKnobsRequest(changes=[self.knobs_pb2.KnobValue(name="K", value=0)])
        with self.assertRaises(self.grpc.RpcError) as caught:
            self.control.SetKnobs(request, metadata=self.auth(), timeout=10)
        self.assertEqual(caught.exception.code(), self.grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("recording", caught.exception.details())
        with self.assertRaises(self.grpc.RpcError) as caught:
            self.control.SetPolicy(self.control_pb2.SetPolicyRequest(policy="linear"), metadata=self.auth(), timeout=10)
        self.assertEqual(caught.exception.code(), self.grpc.StatusCode.FAILED_PRECONDITION)
        state = self.telemetry.GetState(self.telemetry_pb2.GetStateRequest(), timeout=10)
        self.assertEqual({k.name: k.value for k in state.knobs}.get("K"), 200.0)
        self.assertEqual(state.policy, "kv-aware")

    def test_3_seek_outside_the_recording_is_out_of_range(self):
        for outside in (-1, 601 * 10**6):
            with self.assertRaises(self.grpc.RpcError) as caught:
                self.control.Seek(self.control_pb2.SeekRequest(time_us=outside), metadata=self.auth(), timeout=10)
            self.assertEqual(caught.exception.code(), self.grpc.StatusCode.OUT_OF_RANGE)

    def test_4_pause_and_seek_are_events_and_a_seek_restates_the_run(self):
        follower = Follower(self)
        try:
            pb = self.events_pb2
            self.control.Pause(self.control_pb2.PauseRequest(who="python-test"), metadata=self.auth(), timeout=10)
            follower.wait_for(lambda e: self.kind(e) == "run_control" and e.run_control.action == pb.RUN_ACTION_PAUSED
                              and e.run_control.who == "python-test")
            target = 300 * 10**6
            reply = self.control.Seek(self.control_pb2.SeekRequest(time_us=target, who="python-test"),
                                      metadata=self.auth(), timeout=30)
            self.assertEqual(reply.time_us, target)
            at = follower.wait_for(lambda e: self.kind(e) == "run_control" and e.run_control.action == pb.RUN_ACTION_SEEK)
            events = follower.snapshot()
            seek = events[at].run_control
            self.assertEqual((seek.target_us, seek.who), (target, "python-test"))
            # Before it, the run restated up to the target: RunStarted (at the reply's seq), then every
            # recorded event before the target, from the start (a client rebuilds its whole view).
            started = max(i for i in range(at) if self.kind(events[i]) == "run_started")
            self.assertEqual(events[started].seq, reply.seq)
            self.assertEqual(events[started].run_started.scenario, "e3-load-floor")
            history = events[started + 1:at]
            self.assertTrue(history)
            self.assertLess(history[0].time_us, 5 * 10**6)
            self.assertTrue(all(e.time_us < target for e in history))
            self.assertIn("snapshot", [self.kind(e) for e in history])
            seqs = [e.seq for e in events]
            self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))))
            # A client that subscribes from the reply's seq gets the same coherent start.
            late = Follower(self, from_seq=reply.seq)
            try:
                seek_at = late.wait_for(lambda e: self.kind(e) == "run_control" and e.run_control.action == pb.RUN_ACTION_SEEK)
                got = late.snapshot()
                self.assertEqual(self.kind(got[0]), "run_started")
                self.assertEqual([e.seq for e in got[1:seek_at]], [e.seq for e in history])
            finally:
                late.close()
            # Resumed, the recording continues from the target.
            self.control.Resume(self.control_pb2.ResumeRequest(who="python-test"), metadata=self.auth(), timeout=10)
            resumed = follower.wait_for(lambda e: self.kind(e) == "run_control"
                                        and e.run_control.action == pb.RUN_ACTION_RESUMED)
            resumed_seq = follower.snapshot()[resumed].seq
            follower.wait_for(lambda e: e.seq > resumed_seq and self.kind(e) != "run_control")
            after = follower.snapshot()[resumed + 1:]
            self.assertTrue(after)
            self.assertTrue(all(e.time_us >= target for e in after), [e.time_us for e in after][:10])
        finally:
            follower.close()

    def test_6_preview_needs_a_simulation(self):
        request = self.control_pb2.PreviewRequest(changes=[self.knobs_pb2.KnobValue(name="K", value=50)])
        with self.assertRaises(self.grpc.RpcError) as caught:
            self.control.Preview(request, metadata=self.auth(), timeout=10)
        self.assertEqual(caught.exception.code(), self.grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("only a simulation", caught.exception.details())

    def test_5_replay_rules_on_the_command_line(self):
        both = subprocess.run([ARGS.cli, "serve", "--replay", self.recording, "--scenario", "e3-load-floor"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(both.returncode, 2, both.stderr)
        self.assertIn("excludes", both.stderr)
        missing = os.path.join(self.tmp.name, "missing.kvrec")
        gone = subprocess.run([ARGS.cli, "serve", "--replay", missing, "--listen", "127.0.0.1:0"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(gone.returncode, 1, gone.stderr)
        self.assertIn("missing.kvrec", gone.stderr)
        # A recording cut short (as by kill -9) is served as far as it reads, after a warning.
        cut = os.path.join(self.tmp.name, "cut.kvrec")
        shutil.copy(self.recording, cut)
        os.truncate(cut, os.path.getsize(cut) * 6 // 10 + 7)
        server, _ = start_serve(["--replay", cut, "--listen", "127.0.0.1:0"])
        code, err = stop_serve(server)
        self.assertEqual(code, 0, err)
        self.assertIn("truncated tail", err)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--stubs", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
