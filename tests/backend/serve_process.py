"""Starting and stopping a `kvscope-cli serve` process, shared by the Python client tests."""
import argparse
import os
import signal
import subprocess
import sys
import unittest


def start_serve(cli, args):
    """Starts `CLI serve ARGS`; returns the process and the address it listens on."""
    server = subprocess.Popen([cli, "serve"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Byte by byte from the pipe itself: a buffered readline could swallow the log lines after it,
    # which communicate() (reading the pipe directly) would then never see.
    raw = b""
    while not raw.endswith(b"\n"):
        byte = os.read(server.stdout.fileno(), 1)
        if not byte:
            break
        raw += byte
    line = raw.decode(errors="replace")
    if not line.startswith("listening on "):
        server.kill()
        raise RuntimeError("serve did not start: %r %s" % (line, server.stderr.read()))
    return server, line.split()[-1]


def stop_serve(server):
    """SIGINT, as an operator would; returns the exit code and what it wrote (logs go to stdout)."""
    server.send_signal(signal.SIGINT)
    try:
        out, err = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
    return server.returncode, out + err


def test_main(module, *paths):
    """A Python test's main: reads --cli and the other `paths` CTest passes into module.ARGS, then
    runs the module's tests (unknown arguments go to unittest, e.g. a test name)."""
    parser = argparse.ArgumentParser()
    for name in ("--cli",) + paths:
        parser.add_argument(name, required=True)
    module.ARGS, rest = parser.parse_known_args()
    unittest.main(module=module, argv=[sys.argv[0]] + rest, verbosity=2)
