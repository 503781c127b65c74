#!/usr/bin/python3
"""A real Prometheus (Debian's `prometheus` package) scrapes `kvscope-cli serve --metrics` and a
value queried back through its HTTP API equals what /metrics says: the exposition is one that
Prometheus accepts, with the names and labels a Grafana panel would query. Stdlib only.

Prometheus missing is a failure, not a skip: CI installs it with scripts/deps.sh."""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

PROMETHEUS = "/usr/bin/prometheus"
ARGS = None
# Upper bounds on waiting, not timings under test: a slow CI machine only takes longer.
DEADLINE_S = 60
POLL_S = 0.5

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{(name, frozenset(labels)): value} of every sample line."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise AssertionError("not a sample line: %r" % line)
        labels = frozenset(LABEL.findall(m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def free_port():
    # Prometheus has no "port 0"; the tiny window before it binds is harmless on a test machine.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, attempt, log=lambda: ""):
    """Polls attempt() until it returns something other than None; fails naming `what`."""
    deadline = time.monotonic() + DEADLINE_S
    last = None
    while time.monotonic() < deadline:
        try:
            result = attempt()
            if result is not None:
                return result
        except (urllib.error.URLError, ConnectionError, OSError) as e:
            last = e
        time.sleep(POLL_S)
    raise AssertionError("gave up waiting (%d s) for %s; last error: %s\n%s" % (DEADLINE_S, what, last, log()))


class PrometheusScrape(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(PROMETHEUS, os.X_OK):
            raise AssertionError("%s is missing: install Debian's 'prometheus' package (scripts/deps.sh does)"
                                 % PROMETHEUS)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.prometheus = cls.prometheus_log = None
        # A file, not a pipe nobody reads: a chatty server must never block on a full pipe.
        cls.serve_log = open(os.path.join(cls.tmp.name, "serve.log"), "w+")
        # As fast as possible: the run ends within seconds and the values stay put for the scrape.
        cls.serve = subprocess.Popen(
            [ARGS.cli, "serve", "--scenario", "e3-load-floor", "--speed", "0", "--duration", "1800",
             "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=cls.serve_log, text=True)
        listening = cls.serve.stdout.readline()
        metrics = cls.serve.stdout.readline()
        match = re.match(r"^metrics on (http://\S+/metrics)$", metrics.strip())
        if not listening.startswith("listening on ") or not match:
            cls.serve.kill()
            cls.serve.wait()
            cls.serve_log.seek(0)
            raise AssertionError("serve did not start: %r %r %s" % (listening, metrics, cls.serve_log.read()))
        cls.metrics_url = match.group(1)
        cls.metrics_target = urllib.parse.urlparse(cls.metrics_url).netloc

    @classmethod
    def tearDownClass(cls):
        code = None
        try:
            if cls.prometheus is not None:
                cls.prometheus.terminate()
                cls.prometheus.wait(timeout=30)
            cls.serve.send_signal(signal.SIGTERM)
            code = cls.serve.wait(timeout=30)
        finally:
            for p in (cls.prometheus, cls.serve):
                if p is not None and p.poll() is None:
                    p.kill()
            for f in (cls.prometheus_log, cls.serve_log):
                if f is not None:
                    f.close()
            cls.tmp.cleanup()
        assert code == 0, "serve exited %s on SIGTERM" % code

    def final_metrics(self):
        """/metrics once the run has ended, so its values no longer move."""
        def finished():
            status, content_type, body = get(self.metrics_url)
            self.assertEqual(status, 200)
            self.assertTrue(content_type.startswith("text/plain; version=0.0.4"), content_type)
            values = parse(body)
            return values if values.get(("kvscope_run_finished", frozenset())) == 1 else None
        return wait_for("the served run to finish", finished)

    def start_prometheus(self):
        config = os.path.join(self.tmp.name, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: kvscope\n    static_configs:\n"
                    "      - targets: ['%s']\n" % self.metrics_target)
        port = free_port()
        log_path = os.path.join(self.tmp.name, "prometheus.log")
        type(self).prometheus_log = open(log_path, "w")
        type(self).prometheus = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(self.tmp.name, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % port],
            stdout=self.prometheus_log, stderr=subprocess.STDOUT)
        return "http://127.0.0.1:%d" % port, lambda: open(log_path).read()[-3000:]

    def test_prometheus_scrapes_and_answers_queries(self):
        values = self.final_metrics()
        evictions = values[("kvscope_evictions_total", frozenset())]
        d0 = frozenset({("worker", "D0"), ("role", "decode")})
        used_d0 = values[("kvscope_num_used_tokens", d0)]
        bindings_d0 = values[("kvscope_bindings_total", d0)]
        completed = values[("kvscope_e2e_request_latency_seconds_count", frozenset())]
        self.assertGreater(completed, 0)

        api, log = self.start_prometheus()

        def query(promql, expected):
            def attempt():
                url = api + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
                status, _, body = get(url)
                reply = json.loads(body)
                if status != 200 or reply.get("status") != "success" or not reply["data"]["result"]:
                    return None
                result = reply["data"]["result"]
                self.assertEqual(len(result), 1, result)
                return result[0]
            sample = wait_for("Prometheus to answer %s" % promql, attempt, log)
            self.assertEqual(float(sample["value"][1]), expected, "%s: %s" % (promql, sample))
            return sample["metric"]

        query("kvscope_evictions_total", evictions)
        labels = query('kvscope_num_used_tokens{worker="D0"}', used_d0)
        self.assertEqual(labels.get("role"), "decode")
        self.assertEqual(labels.get("job"), "kvscope")
        query('kvscope_bindings_total{worker="D0",role="decode"}', bindings_d0)
        query("kvscope_e2e_request_latency_seconds_count", completed)
        # The scrape itself succeeded (Prometheus accepted the whole exposition, not just some lines).
        query('up{job="kvscope"}', 1.0)
        query('scrape_samples_scraped{job="kvscope"}', float(len(values)))

    def test_counters_equal_the_simulate_summary(self):
        # The same scenario, seed and duration through `simulate`: what Grafana charts is what the
        # lab's summary says.
        summary = json.loads(subprocess.run(
            [ARGS.cli, "simulate", "--scenario", "e3-load-floor", "--duration", "1800", "--format", "json"],
            check=True, capture_output=True, text=True, timeout=300).stdout)
        values = self.final_metrics()
        total = lambda name: values[(name, frozenset())]
        self.assertGreater(summary["evictions"]["count"], 0)
        self.assertEqual(total("kvscope_evictions_total"), summary["evictions"]["count"])
        self.assertEqual(total("kvscope_seeds_total"), summary["seeds"])
        self.assertEqual(total("kvscope_reseeds_total"), summary["reseeds"])
        self.assertEqual(total("kvscope_requests_total"), summary["requests"]["total"])
        self.assertEqual(total("kvscope_request_failures_total"), summary["requests"]["failed"])
        self.assertEqual(total("kvscope_e2e_request_latency_seconds_count"), summary["requests"]["completed"])
        self.assertEqual(total("kvscope_worker_crashes_total"), summary["worker_crashes"])
        for worker in summary["workers"]:
            labels = frozenset({("worker", worker["id"]), ("role", worker["role"])})
            self.assertEqual(values[("kvscope_bindings_total", labels)], worker["bindings"], worker["id"])

    def test_other_paths_are_not_found(self):
        with self.assertRaises(urllib.error.HTTPError) as caught:
            get(self.metrics_url.replace("/metrics", "/nope"))
        self.assertEqual(caught.exception.code, 404)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
