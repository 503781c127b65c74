#!/usr/bin/python3
"""A live sweep as the lab's scripts run it: `kvscope-cli serve --router --runs DIR`,
then per run `kvscope-cli mark --start NAME --param ...`, the reference router client routing and
reporting 200 requests under that run's K, and `mark --end`. Each run gets DIR/NNN-name.kvrec and
DIR/NNN-name.json whose request counts are what was routed in that run, and `kvscope-cli report` on
the recording agrees with the JSON; runs.json lists both. `mark --end` with no run open fails, and
`--runs` without a live session is a usage error."""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

import serve_process

ARGS = None
REQUESTS = 200


def import_stubs():
    sys.path.insert(0, ARGS.stubs)
    sys.path.insert(0, ARGS.examples)
    global grpc, control_pb2, control_pb2_grpc, knobs_pb2, router_client
    import grpc
    from kvscope.v1 import control_pb2, control_pb2_grpc, knobs_pb2
    import router_client


def cli(*args):
    return subprocess.run([ARGS.cli] + list(args), capture_output=True, text=True, timeout=60)


class LiveSweep(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import_stubs()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.runs = os.path.join(cls.tmp.name, "runs")  # serve creates it
        cls.session = os.path.join(cls.tmp.name, "session.kvrec")
        cls.server, cls.address = serve_process.start_serve(
            ARGS.cli, ["--router", "D0,D1,D2", "--listen", "127.0.0.1:0", "--runs", cls.runs, "--record", cls.session,
                       "--twin-check", "e3-load-floor"])

    @classmethod
    def tearDownClass(cls):
        if cls.server.poll() is None:
            serve_process.stop_serve(cls.server)
        cls.tmp.cleanup()

    def mark(self, *args):
        result = cli("mark", self.address, *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def set_k(self, value):
        with grpc.insecure_channel(self.address) as channel:
            control_pb2_grpc.ControlStub(channel).SetKnobs(
                control_pb2.SetKnobsRequest(changes=[knobs_pb2.KnobValue(name="K", value=value)], who="sweep"))

    def wait_for_runs(self, count):
        """The files of a run are written off the stream thread: wait until runs.json lists `count`."""
        path = os.path.join(self.runs, "runs.json")
        deadline = time.time() + 20
        while time.time() < deadline:
            if os.path.exists(path):
                with open(path) as f:
                    runs = json.load(f)
                if len(runs) >= count:
                    return runs
            time.sleep(0.05)
        self.fail("runs.json never listed %d runs: %s" % (count, os.listdir(self.runs)))

    def test_1_each_marked_run_gets_a_recording_and_a_summary(self):
        nothing_open = cli("mark", self.address, "--end")
        self.assertEqual(nothing_open.returncode, 1, nothing_open.stdout)
        self.assertIn("no run is open", nothing_open.stderr)

        # Requests outside any run (a warm-up) belong to no run.
        router_client.run(self.address, 50, 20, None, seed=9, first_request=900001, first_session=900001)

        failed_every = 10
        sweep = [("k0", 0, None), ("k200", 200, failed_every)]
        for number, (name, k, fail_every) in enumerate(sweep):
            self.set_k(k)
            self.assertIn("run %d '%s' started" % (number + 1, name), self.mark("--start", name, "--param", "K=%d" % k))
            counter = [0]

            def outcome(reply, fail_every=fail_every):
                counter[0] += 1
                return "worker lost the request" if fail_every and counter[0] % fail_every == 0 else None

            routed = router_client.run(self.address, REQUESTS, 40, None, seed=number + 1,
                                       first_request=1 + number * 10000, first_session=1 + number * 10000,
                                       outcome=outcome)
            failed = REQUESTS // fail_every if fail_every else 0
            self.assertEqual(len(routed["routed"]), REQUESTS)
            # Every observation is in before the end marker (a failed request stores no blocks).
            self.assertEqual(routed["applied"], 3 * REQUESTS - failed)
            self.assertIn("run %d '%s' ended" % (number + 1, name), self.mark("--end"))

        runs = self.wait_for_runs(2)
        # --twin-check: the twin on each run's traffic, recorded beside it once the run's files are in place.
        deadline = time.time() + 60
        while time.time() < deadline and not os.path.exists(os.path.join(self.runs, "002-k200.twin.kvrec")):
            time.sleep(0.05)
        self.assertEqual(sorted(os.listdir(self.runs)),
                         ["001-k0.json", "001-k0.kvrec", "001-k0.twin.kvrec", "002-k200.json", "002-k200.kvrec",
                          "002-k200.twin.kvrec", "runs.json"])
        self.assertEqual([r["name"] for r in runs], ["k0", "k200"])
        self.assertEqual([r["index"] for r in runs], [1, 2])
        for number, (name, k, fail_every) in enumerate(sweep):
            stem = "%03d-%s" % (number + 1, name)
            with open(os.path.join(self.runs, stem + ".json")) as f:
                summary = json.load(f)
            run = summary.pop("run")
            self.assertEqual(run["parameters"], [["K", str(k)]])
            self.assertEqual(run["recording"], stem + ".kvrec")
            self.assertEqual(run["ended_by"], "kvscope-cli mark")
            self.assertEqual(summary["scenario"], name)
            failed = REQUESTS // fail_every if fail_every else 0
            self.assertEqual(summary["requests"], {"total": REQUESTS, "completed": REQUESTS - failed, "failed": failed})
            self.assertEqual(runs[number]["requests"], summary["requests"])

            # The same numbers from the recording alone, through `report`.
            report = cli("report", os.path.join(self.runs, stem + ".kvrec"), "--format", "json")
            self.assertEqual(report.returncode, 0, report.stderr)
            self.assertEqual(report.stderr, "")  # no damage
            reported = json.loads(report.stdout)
            for s in (summary, reported):
                s.pop("wall_seconds")
            self.assertEqual(reported, summary)

        table = cli("report", os.path.join(self.runs, "001-k0.kvrec"))
        self.assertIn("scenario k0", table.stdout)
        self.assertIn("%d total, %d completed" % (REQUESTS, REQUESTS), table.stdout)

    def test_2_stop_logs_each_run_and_keeps_the_session_recording(self):
        code, log = serve_process.stop_serve(self.server)
        self.assertEqual(code, 0, log)
        self.assertIn("run 1 'k0' ended: %d requests, 0.0%% failed, summary %s" %
                      (REQUESTS, os.path.join(self.runs, "001-k0.json")), log)
        self.assertIn("run 2 'k200' ended: %d requests, 10.0%% failed" % REQUESTS, log)
        # Each run's twin check: the run's numbers and the twin's on the same traffic, and where it went.
        for stem, name in (("001-k0", "k0"), ("002-k200", "k200")):
            line = next((l for l in log.splitlines() if "'%s' twin check (" % name in l), "")
            self.assertIn("on e3-load-floor's cluster; run / twin): failure rate (%) ", line, log)
            self.assertRegex(line, r"TTFT p90 \(s\) [0-9.]+ / [0-9.]+ \([-+][0-9.]+%\)")
            self.assertIn("shares % D0 ", line)
            self.assertIn(os.path.join(self.runs, stem + ".twin.kvrec"), line)
            twin = cli("report", os.path.join(self.runs, stem + ".twin.kvrec"), "--format", "json")
            self.assertEqual(twin.returncode, 0, twin.stderr)
            self.assertEqual(json.loads(twin.stdout)["requests"]["total"], REQUESTS)
        # The whole session, warm-up included, is still recorded by --record alongside.
        report = cli("report", self.session, "--format", "json")
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertEqual(json.loads(report.stdout)["requests"]["total"], 50 + 2 * REQUESTS)

    def test_3_runs_needs_a_live_session(self):
        for args in (["--scenario", "e3-load-floor"], ["--replay", self.session]):
            refused = cli("serve", "--runs", os.path.join(self.tmp.name, "never"), *args)
            self.assertEqual(refused.returncode, 2, refused.stdout + refused.stderr)
            self.assertIn("--runs", refused.stdout + refused.stderr)
            self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "never")))
        # An unusable directory is refused before serving, naming it.
        blocker = os.path.join(self.tmp.name, "file")
        with open(blocker, "w") as f:
            f.write("x")
        refused = cli("serve", "--router", "D0,D1", "--listen", "127.0.0.1:0", "--runs", os.path.join(blocker, "runs"))
        self.assertEqual(refused.returncode, 1, refused.stdout)
        self.assertIn(os.path.join(blocker, "runs"), refused.stderr)
        self.assertNotIn("listening on", refused.stdout)
        # --twin-check checks marked runs: without --runs, or with no such scenario, refused before serving.
        refused = cli("serve", "--router", "D0,D1", "--listen", "127.0.0.1:0", "--twin-check", "e3-load-floor")
        self.assertEqual(refused.returncode, 2, refused.stdout + refused.stderr)
        self.assertIn("--twin-check", refused.stderr)
        refused = cli("serve", "--router", "D0,D1", "--listen", "127.0.0.1:0", "--runs",
                      os.path.join(self.tmp.name, "never2"), "--twin-check", "no-such-scenario")
        self.assertNotEqual(refused.returncode, 0, refused.stdout)
        self.assertIn("no-such-scenario", refused.stderr)
        self.assertNotIn("listening on", refused.stdout)


if __name__ == "__main__":
    serve_process.test_main(sys.modules[__name__], "--stubs", "--examples")
