#!/usr/bin/env python3
"""A savingsd client in plain Python (standard library only).

savingsd speaks JSON-RPC 2.0, one JSON document per line, over a Unix socket.

    python3 savings_client.py call daemon.ping
    python3 savings_client.py call goal.get '{"goal": "Emergency"}'
    python3 savings_client.py batch goal.list dashboard.get
    python3 savings_client.py events goal.reached month.closed     # Ctrl-C to stop

The socket is --socket PATH, else $SAVINGSD_SOCKET, else $XDG_RUNTIME_DIR/savingsd/savingsd.sock
(the per-user daemon), else /run/savingsd/savingsd.sock (the system service).
"""
import argparse
import itertools
import json
import os
import socket
import sys


def default_socket():
    if os.environ.get("SAVINGSD_SOCKET"):
        return os.environ["SAVINGSD_SOCKET"]
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/savingsd-{os.getuid()}"
    user = os.path.join(runtime, "savingsd", "savingsd.sock") if os.environ.get("XDG_RUNTIME_DIR") else os.path.join(runtime, "savingsd.sock")
    if os.path.exists(user):
        return user
    return "/run/savingsd/savingsd.sock"


class RPCError(Exception):
    def __init__(self, error):
        super().__init__(f"{error.get('message')} (code {error.get('code')}, kind {error.get('data', {}).get('kind')})")
        self.error = error


class Client:
    def __init__(self, path=None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path or default_socket())
        self.reader = self.sock.makefile("r", encoding="utf-8")
        self.ids = itertools.count(1)

    def close(self):
        self.reader.close()
        self.sock.close()

    def _send(self, document):
        self.sock.sendall((json.dumps(document) + "\n").encode("utf-8"))

    def _receive(self):
        """The next response; notifications (progress, events) in between are skipped."""
        while True:
            line = self.reader.readline()
            if not line:
                raise ConnectionError("savingsd closed the connection")
            message = json.loads(line)
            if isinstance(message, list) or "id" in message:
                return message

    def call(self, method, params=None):
        request = {"jsonrpc": "2.0", "id": next(self.ids), "method": method}
        if params is not None:
            request["params"] = params
        self._send(request)
        response = self._receive()
        if "error" in response:
            raise RPCError(response["error"])
        return response["result"]

    def batch(self, calls):
        """Several calls in one line; results (or RPCError instances) in the order asked."""
        requests = [{"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params or {}}
                    for method, params in calls]
        self._send(requests)
        by_id = {response["id"]: response for response in self._receive()}
        return [RPCError(by_id[r["id"]]["error"]) if "error" in by_id[r["id"]] else by_id[r["id"]]["result"]
                for r in requests]

    def events(self, topics=None):
        """Subscribes on this connection and yields each event's params: {topic, at, data}."""
        self.call("events.subscribe", {"topics": topics} if topics else {})
        while True:
            line = self.reader.readline()
            if not line:
                return
            message = json.loads(line)
            if message.get("method") == "event":
                yield message["params"]


def main():
    parser = argparse.ArgumentParser(description="A savingsd client using only the Python standard library.")
    parser.add_argument("--socket", help="the daemon's socket")
    commands = parser.add_subparsers(dest="command", required=True)
    call = commands.add_parser("call", help="call one method")
    call.add_argument("method")
    call.add_argument("params", nargs="?", help="params as a JSON object")
    batch = commands.add_parser("batch", help="call several methods without params in one batch")
    batch.add_argument("methods", nargs="+")
    events = commands.add_parser("events", help="print events as they happen")
    events.add_argument("topics", nargs="*")
    args = parser.parse_args()

    try:
        client = Client(args.socket)
    except OSError as error:
        sys.exit(f"cannot reach savingsd ({error}); is it running? Try --socket PATH")
    try:
        if args.command == "call":
            print(json.dumps(client.call(args.method, json.loads(args.params) if args.params else None), indent=2))
        elif args.command == "batch":
            results = client.batch([(method, None) for method in args.methods])
            for method, result in zip(args.methods, results):
                shown = str(result) if isinstance(result, RPCError) else json.dumps(result)
                print(f"{method}: {shown}")
        else:
            for event in client.events(args.topics or None):
                print(json.dumps(event), flush=True)
    except RPCError as error:
        sys.exit(f"savingsd: {error}")
    except KeyboardInterrupt:
        pass
    finally:
        client.close()


if __name__ == "__main__":
    main()
