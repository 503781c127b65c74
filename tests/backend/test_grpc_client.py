#!/usr/bin/python3
"""A real, independent gRPC client (Debian's python3-grpcio, stubs generated at build time from the
project's protos) against `kvscope-cli serve`: reflection lists the services, health answers, a
subscriber follows the run, a knob change made with the bearer token shows up as an event and in
later snapshots, and control calls without the token are refused and change nothing."""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ARGS = None


def stubs():
    sys.path.insert(0, ARGS.stubs)
    import grpc  # noqa: F401
    from kvscope.v1 import control_pb2, control_pb2_grpc, knobs_pb2, telemetry_pb2, telemetry_pb2_grpc
    import reflection_client_pb2
    import reflection_client_pb2_grpc
    return (grpc, control_pb2, control_pb2_grpc, knobs_pb2, telemetry_pb2, telemetry_pb2_grpc,
            reflection_client_pb2, reflection_client_pb2_grpc)


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
             "--speed", "50", "--duration", "1200"],
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
        change_time = min(e.time_us for e in events if e.WhichOneof("payload") == "knob")
        late = [e.snapshot for e in events if e.WhichOneof("payload") == "snapshot" and e.time_us > 320e6]
        self.assertTrue(late, "no snapshot after the start window")
        bindings = {g.worker: g.bindings for g in late[-1].workers}
        # With K=0 from early on, fresh sessions follow the warm D (overlap pinning): D2 falls behind.
        # (With K=200 kept, e3 binds 16-17 sessions to every D.)
        self.assertLess(change_time, 300e6)
        self.assertGreater(bindings[0] + bindings[1], 3 * bindings[2], bindings)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--stubs", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
