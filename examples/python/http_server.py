#!/usr/bin/env python3
"""An HTTP resource server for idemsim's HTTP model, in Python with the
standard library only. It speaks idemsim's protocol (docs/protocol.md): the
clients' requests come in as JSON, the server answers each with a response,
and reports each change a request makes to a resource as an effect, which
idemsim's ledger counts per request.

    http_server.py [--keys=store|none] [--key-read=primary|any-replica]

--keys=store        a request with an Idempotency-Key is executed once: the
                    key is stored with its response in the step that
                    executes it (one transaction), and a request with a
                    known key gets the stored response again (holds)
--keys=none         the key is ignored: a POST retried after a lost response
                    creates a second resource (no-duplicate-effect)
--key-read=any-replica  the key is looked up on one of two database
                    replicas, chosen by a draw through idemsim ("replica",
                    0 the primary, 1 a follower that has not yet seen the
                    keys stored in the last second): a retry read on the
                    follower finds no key and executes again. idemsim
                    records the draw, so the failing run replays and shrinks

Resources live in the program's storage ("res:<id>"). The first start of
a run (protocol 3) names the scenario's [[resources]], what the database
holds when the run begins; the program stores them in its answer, as the
built-in server starts with them (ETag 1, a POST creating ids after the
last), and reads its storage after a restart.
"""

import json
import sys

FOLLOWER_LAG_US = 1_000_000


def emit(lines):
    for line in lines:
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.write('{"type":"done"}\n')
    sys.stdout.flush()


def options(argv):
    opts = {"keys": "store", "key-read": "primary"}
    for arg in argv:
        name, _, value = arg.lstrip("-").partition("=")
        if name not in opts:
            sys.exit(f"http_server.py: unknown option {arg!r}; see the usage at the top of the file")
        opts[name] = value
    if opts["keys"] not in ("store", "none") or opts["key-read"] not in ("primary", "any-replica"):
        sys.exit("http_server.py: use --keys=store|none and --key-read=primary|any-replica")
    return opts["keys"], opts["key-read"]


def draw(name, bound):
    """A random choice made by idemsim: recorded, replayed and shrunk."""
    sys.stdout.write(json.dumps({"type": "draw", "name": name, "bound": bound}) + "\n")
    sys.stdout.flush()
    return json.loads(sys.stdin.readline())["value"]


class Server:
    def __init__(self, keys, key_read, storage):
        self.keys, self.key_read = keys, key_read
        self.stored = dict(storage)

    def load(self, resources, out):
        """The database a run begins with: the scenario's [[resources]]."""
        for r in resources:
            self.put(out, f"res:{r['resource']}", {"value": r["value"], "etag": r["etag"]})
        if resources:
            self.put(out, "next_id", max(r["resource"] for r in resources) + 1)

    def put(self, out, key, value):
        self.stored[key] = value
        out.append({"type": "store", "key": key, "value": value})

    def known(self, key, now_us):
        """The stored response of `key`, as the replica the lookup reads has it."""
        row = self.stored.get("key:" + key)
        if row is None or self.key_read == "primary":
            return row
        replica = draw("replica", 2)
        if replica == 1 and now_us - row["stored_us"] < FOLLOWER_LAG_US:
            return None  # the follower has not seen it yet
        return row

    def execute(self, q, out):
        """Runs the request: its status, the resource as it stands after it."""
        rid, body, method = q["resource"], q["body"], q["method"]
        res = self.stored.get(f"res:{rid}")
        if method == "POST":
            rid = self.stored.get("next_id", 1)
            self.put(out, "next_id", rid + 1)
            res, status = {"value": body, "etag": 1}, 201
        elif method == "GET":
            return (200, rid, res) if res else (404, rid, None)
        elif q["if_match"] is not None and (res is None or res["etag"] != q["if_match"]):
            return 412, rid, res
        elif method == "DELETE":
            if res is None:
                return 404, rid, None
            self.put(out, f"res:{rid}", None)
            # A DELETE has no body: its change is named by the resource's id.
            out.append({"type": "effect", "op": q["request"], "payload": rid})
            return 204, rid, None
        elif method == "PUT":
            res, status = {"value": body, "etag": (res or {"etag": 0})["etag"] + 1}, 200
        else:  # PATCH adds
            if res is None:
                return 404, rid, None
            res, status = {"value": res["value"] + body, "etag": res["etag"] + 1}, 200
        self.put(out, f"res:{rid}", res)
        out.append({"type": "effect", "op": q["request"], "payload": body})
        return status, rid, res

    def request(self, sender, q, now_us, out):
        key = q["idempotency_key"] if self.keys == "store" and q["method"] != "GET" else None
        row = self.known(key, now_us) if key else None
        if row is not None:
            answer = dict(row["response"], request=q["request"], attempt=q["attempt"], replayed=True)
        else:
            status, rid, res = self.execute(q, out)
            answer = {"type": "response", "request": q["request"], "attempt": q["attempt"],
                      "method": q["method"], "status": status, "resource": rid,
                      "value": res["value"] if res else 0, "etag": res["etag"] if res else 0,
                      "replayed": False}
            if key and status < 300:
                # The key and its response in the step of the change: one transaction.
                self.put(out, "key:" + key, {"response": answer, "stored_us": now_us})
        out.append({"type": "send", "to": sender, "payload": answer})


def main():
    keys, key_read = options(sys.argv[1:])
    server = Server(keys, key_read, {})
    for line in sys.stdin:
        m = json.loads(line)
        out = []
        if m["type"] == "start":
            server = Server(keys, key_read, m["storage"])
            out.append({"type": "hello", "protocol": 3})
            if not m["restarted"]:
                server.load(m.get("resources", []), out)
        elif m["type"] == "msg" and m["payload"]["type"] == "request":
            server.request(m["from"], m["payload"], m["now_us"], out)
        emit(out)


if __name__ == "__main__":
    main()
