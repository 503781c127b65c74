#!/usr/bin/python3
"""A KV event publisher that behaves on the wire as vLLM's and SGLang's ZmqEventPublisher
(vllm/distributed/kv_events.py @ 0181ea3173e53eea8cf04a86891488e3dc89bb34, sglang
python/sglang/srt/disaggregation/kv_events.py @ 612d579090db24ec7c47cc5ca6b83e0c649b8c28): a PUB
socket sending [topic, seq as 8 big-endian bytes, payload]; a ROUTER replay socket that, sent
[identity, b"", start_seq], answers [identity, b"", seq, payload] for every buffered batch with
seq >= start_seq and then [identity, b"", -1 as 8 signed big-endian bytes, b""].

Driven line by line from stdin so a test can stage what a subscriber misses:
  publish SEQ FILE      buffer and send FILE's bytes as batch SEQ
  buffer-only SEQ FILE  buffer it, but do not send it (as a PUB socket past its high-water mark drops)
  resend SEQ            send a buffered batch again (a duplicate)
  raw SEQ HEX           buffer and send these bytes (not a batch)
  quit
Prints "pub tcp://127.0.0.1:P replay tcp://127.0.0.1:R" once bound, then "ok" after each line.
With two arguments, PUB_PORT REPLAY_PORT, it binds those (an engine restarted on its own ports)."""
import sys
import zmq

TOPIC = b"kv-events"
END_SEQ = (-1).to_bytes(8, "big", signed=True)


def main():
    ctx = zmq.Context.instance()
    pub = ctx.socket(zmq.PUB)
    router = ctx.socket(zmq.ROUTER)
    if len(sys.argv) == 3:  # the ports of a publisher this one restarts
        pub_port, replay_port = int(sys.argv[1]), int(sys.argv[2])
        pub.bind("tcp://127.0.0.1:%d" % pub_port)
        router.bind("tcp://127.0.0.1:%d" % replay_port)
    else:
        pub_port = pub.bind_to_random_port("tcp://127.0.0.1")
        replay_port = router.bind_to_random_port("tcp://127.0.0.1")
    print("pub tcp://127.0.0.1:%d replay tcp://127.0.0.1:%d" % (pub_port, replay_port), flush=True)
    buffer = {}
    poller = zmq.Poller()
    poller.register(router, zmq.POLLIN)
    poller.register(sys.stdin.fileno(), zmq.POLLIN)
    while True:
        events = dict(poller.poll())
        if router in events:
            frame = router.recv_multipart()
            if len(frame) == 3:
                client, _, start = frame
                start_seq = int.from_bytes(start, "big")
                for seq in sorted(buffer):
                    if seq >= start_seq:
                        router.send_multipart((client, b"", seq.to_bytes(8, "big"), buffer[seq]))
                router.send_multipart((client, b"", END_SEQ, b""))
        if sys.stdin.fileno() in events:
            line = sys.stdin.readline()
            if not line or line.strip() == "quit":
                break
            words = line.split()
            seq = int(words[1])
            if words[0] in ("publish", "buffer-only"):
                with open(words[2], "rb") as f:
                    buffer[seq] = f.read()
            elif words[0] == "raw":
                buffer[seq] = bytes.fromhex(words[2])
            if words[0] != "buffer-only":
                pub.send_multipart((TOPIC, seq.to_bytes(8, "big"), buffer[seq]))
            print("ok", flush=True)
    pub.close(linger=0)
    router.close(linger=0)


if __name__ == "__main__":
    main()
