#!/usr/bin/python3
"""How a Python router steers through KVScope: a short, runnable reference.

A real router (the lab's, in front of SGLang + Mooncake) does three things with `kvscope.v1.Router`:

1. `Route` every request: KVScope's router core ranks the decode workers under the policy and knobs
   set from the console, binds the session and says the path (direct / seed / reseed / transient).
2. `Report` what then happened: admissions, the KV blocks a worker stored or removed, transfers,
   evictions, link failures, completions with TTFT and E2E. This feeds the prefix index the next
   `Route` uses and the telemetry the console shows.
3. `WatchKnobs` if it keeps its own policy: it receives the policy and knobs now and after every
   change made in the console or through `Control`.

Run it against `kvscope-cli serve --router D0,D1,D2` (stubs from the build: build/python):

    PYTHONPATH=build/python examples/router_client.py --target 127.0.0.1:50051 --requests 200

Installed from the .deb, the stubs and this file are in /usr/share/kvscope:

    PYTHONPATH=/usr/share/kvscope/python /usr/share/kvscope/examples/router_client.py --target 127.0.0.1:50051

Here the "cluster" is pretend: each routed request is admitted, stores its blocks and completes
with a made-up latency. A real router reports what its workers actually did.

A router that has the prompt's token ids can send `token_ids` instead of `block_hashes`: KVScope
hashes them as NVIDIA Dynamo's KV router does, the same hashes it gives the blocks the engines' own
KV events report (the cluster file's `kv_events`), so `cache_view = exact` sees the engines' caches
and no `BlocksStored` report is needed for them.
"""
import argparse
import queue
import random
import sys
import threading

import grpc
from kvscope.v1 import events_pb2, router_pb2, router_pb2_grpc

BLOCK_SIZE_FALLBACK = 24


# Receive limit above the largest message KVScope sends (kMaxEventBytes, core/events/EventLimits.h),
# as KVScope's own clients set it; gRPC's default is 4 MiB.
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]


def metadata(token):
    """Router calls carry the bearer token when the server has one (serve --token-file)."""
    return [("authorization", "Bearer " + token)] if token else []


def watch_knobs(stub, token, updates, stop):
    """Follows policy and knob changes; the first message is the state at subscription."""
    call = stub.WatchKnobs(router_pb2.WatchKnobsRequest(), metadata=metadata(token))
    stop.append(call.cancel)
    try:
        for update in call:
            updates.append(update)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.CANCELLED:
            raise


def prompt_blocks(session, turn, block_size, system_blocks=8):
    """Block hashes of a prompt: a shared system prompt, then the session's growing history."""
    shared = [0xB0000 + i for i in range(system_blocks)]
    own = [(session << 20) + i for i in range(turn * 4)]
    return shared + own, (len(shared) + len(own)) * block_size


def observations(routed, rng, error=None):
    """What a worker would report for one routed request (a pretend cluster). With `error`, the
    request failed with that message (no token produced) instead of completing."""
    request, reply, hashes = routed
    ev = events_pb2.Event
    yield router_pb2.Observation(event=ev(admission=events_pb2.Admission(
        request=request.request_id, session=request.session_id, worker=reply.worker,
        result=events_pb2.ADMISSION_RESULT_ADMITTED, path=reply.path, tokens=request.input_tokens)))
    e2e_us = int(rng.uniform(0.5, 3.0) * 1e6)
    done = events_pb2.RequestDone(request=request.request_id, session=request.session_id, turn=request.turn,
                                  worker=reply.worker, path=reply.path, input_tokens=request.input_tokens)
    if error:
        done.status, done.ttft_us, done.e2e_us, done.error = events_pb2.REQUEST_STATUS_FAILED, -1, e2e_us, error
    else:
        yield router_pb2.Observation(blocks_stored=router_pb2.BlocksStored(
            worker=reply.worker, session=request.session_id, block_hashes=hashes))
        done.status, done.ttft_us, done.e2e_us, done.output_tokens = events_pb2.REQUEST_STATUS_OK, e2e_us // 5, e2e_us, 200
    yield router_pb2.Observation(event=ev(request_done=done))


def run(target, requests, sessions, token, seed=1, first_request=1, first_session=1, outcome=None):
    """Routes `requests` turns of `sessions` sessions and reports them; returns what it saw.
    `outcome(reply)` may return an error message: that request failed (default: all complete)."""
    rng = random.Random(seed)
    with grpc.insecure_channel(target, options=CHANNEL_OPTIONS) as channel:
        stub = router_pb2_grpc.RouterStub(channel)
        cluster = stub.GetCluster(router_pb2.GetClusterRequest(), metadata=metadata(token))
        block_size = cluster.block_size or BLOCK_SIZE_FALLBACK
        updates, stop = [], []
        watcher = threading.Thread(target=watch_knobs, args=(stub, token, updates, stop), daemon=True)
        watcher.start()

        # One Report stream stays open; observations go in as they happen (a queue feeds it).
        outbox = queue.Queue()
        report = stub.Report.future(iter(outbox.get, None), metadata=metadata(token))

        routed, turns = [], {}
        for request_id in range(first_request, first_request + requests):
            session = rng.randrange(first_session, first_session + sessions)
            turns[session] = turns.get(session, 0) + 1
            hashes, tokens = prompt_blocks(session, turns[session], block_size)
            request = router_pb2.RouteRequest(request_id=request_id, session_id=session, turn=turns[session],
                                              input_tokens=tokens, block_hashes=hashes)
            reply = stub.Route(request, metadata=metadata(token))
            if reply.worker >= 0:
                routed.append((request, reply, hashes))
                for observation in observations(routed[-1], rng, outcome(reply) if outcome else None):
                    outbox.put(observation)

        outbox.put(None)  # ends the stream; the summary says how many were applied
        summary = report.result(timeout=60)
        for cancel in stop:
            cancel()
        watcher.join(timeout=5)
        return {"cluster": cluster, "routed": routed, "applied": summary.applied, "knob_updates": updates}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="127.0.0.1:50051", help="HOST:PORT of kvscope-cli serve --router")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--token-file", help="file holding the server's bearer token")
    args = parser.parse_args()
    token = open(args.token_file).read().strip() if args.token_file else None
    result = run(args.target, args.requests, args.sessions, token)
    names = [w.name for w in result["cluster"].workers]
    counts = {name: 0 for name in names}
    paths = {}
    for _, reply, _ in result["routed"]:
        counts[reply.worker_name] += 1
        name = events_pb2.RoutePath.Name(reply.path)
        paths[name] = paths.get(name, 0) + 1
    print("policy %s; routed %d of %d requests: %s" % (
        result["cluster"].policy, len(result["routed"]), args.requests,
        ", ".join("%s %d" % (n, c) for n, c in counts.items())))
    print("paths: " + ", ".join("%s %d" % kv for kv in sorted(paths.items())))
    print("observations applied: %d" % result["applied"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
