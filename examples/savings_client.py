#!/usr/bin/env python3
"""A savingsd client in plain Python (standard library only).

savingsd speaks JSON-RPC 2.0, one JSON document per line, over a Unix socket.

    python3 savings_client.py call daemon.ping
    python3 savings_client.py call goal.get '{"goal": "Emergency"}'
    python3 savings_client.py batch goal.list dashboard.get
    python3 savings_client.py events goal.reached month.closed     # Ctrl-C to stop
    python3 savings_client.py upload tx.import bank.csv '{"asset": "Bank"}'
    python3 savings_client.py download db.backup backup.db

Files travel over the connection (the daemon may run as another user and never opens yours):
an upload sends the file in base64 chunks after the daemon's upload.ready, a download receives
download.chunk notifications before the response (docs/protocol.md, "Files over the connection").

The socket is --socket PATH, else $SAVINGSD_SOCKET, else $XDG_RUNTIME_DIR/savingsd/savingsd.sock
(the per-user daemon), else /run/savingsd/savingsd.sock (the system service).
"""
import argparse
import base64
import itertools
import json
import os
import socket
import sys
import tempfile


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

    def _response_to(self, request_id, on_notification=None):
        """Reads until the response to request_id; notifications go to on_notification."""
        while True:
            line = self.reader.readline()
            if not line:
                raise ConnectionError("savingsd closed the connection")
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RPCError(message["error"])
                return message
            if on_notification and on_notification(message):
                return None

    def upload(self, method, params, path):
        """Calls an upload method with the bytes of the file at path (opened here, by us)."""
        request_id = next(self.ids)
        size = os.path.getsize(path)
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method,
                    "params": dict(params, upload={"size": size})})
        ready = {}
        # The daemon checks the call first: a refusal is the response, and nothing is sent.
        self._response_to(request_id, lambda m: m.get("method") == "upload.ready" and ready.update(m["params"]) is None)
        with open(path, "rb") as source:
            while chunk := source.read(ready["max_chunk_bytes"]):
                self._send({"jsonrpc": "2.0", "method": "upload.chunk",
                            "params": {"id": request_id, "data": base64.b64encode(chunk).decode("ascii")}})
        self._send({"jsonrpc": "2.0", "method": "upload.end", "params": {"id": request_id}})
        return self._response_to(request_id)["result"]

    def download(self, method, params, path):
        """Calls a download method and writes the file to path, renamed into place once complete."""
        request_id = next(self.ids)
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params or {}, download=True)})
        directory = os.path.dirname(os.path.abspath(path))
        fd, partial = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".partial-")
        try:
            with os.fdopen(fd, "wb") as target:
                def take(message):
                    if message.get("method") == "download.chunk" and message["params"]["id"] == request_id:
                        target.write(base64.b64decode(message["params"]["data"]))
                result = self._response_to(request_id, take)["result"]
                if target.tell() != result["bytes"]:
                    raise ConnectionError(f"received {target.tell()} of {result['bytes']} bytes")
                target.flush()
                os.fsync(target.fileno())
            os.replace(partial, path)
            return result
        except BaseException:
            os.unlink(partial)
            raise

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
    upload = commands.add_parser("upload", help="call an upload method (tx.import, data.import, data.legacy_import) with a file")
    upload.add_argument("method")
    upload.add_argument("file")
    upload.add_argument("params", nargs="?", help="other params as a JSON object")
    download = commands.add_parser("download", help="call a download method (data.export, db.backup) into a file")
    download.add_argument("method")
    download.add_argument("file")
    download.add_argument("params", nargs="?", help="other params as a JSON object")
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
        elif args.command == "upload":
            print(json.dumps(client.upload(args.method, json.loads(args.params) if args.params else {}, args.file), indent=2))
        elif args.command == "download":
            print(json.dumps(client.download(args.method, json.loads(args.params) if args.params else {}, args.file), indent=2))
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
