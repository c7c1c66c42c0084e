"""What the scripted mock models (claude-code/mock.py, agents/mock.py)
share: the script of turns with the log of requests, the HTTP handler's
plain answers (JSON, server-sent events) and the loopback server.

A mock is run as `mock.py SCRIPT.json LOG.jsonl PORTFILE`: SCRIPT.json is
the list of turns, every request is appended to LOG.jsonl, and the port it
listens on (127.0.0.1, chosen by the system) goes to PORTFILE.
"""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    """The scripted turns, taken in order by the model calls that offer
    tools (the agent loop); every request is logged."""

    def __init__(self, script_path, log_path):
        with open(script_path) as f:
            self.turns = json.load(f)
        self.log_path = log_path
        self.lock = threading.Lock()
        self.taken = 0
        self.calls = 0

    def take(self, record, offers_tools):
        """Log `record` (what the request was); the call's number and its
        turn: the next scripted one when it offers tools ({"text": "done"}
        once the script has run out), else a short text (a title, a
        summary, a router)."""
        with self.lock:
            self.calls += 1
            n = self.calls
            with open(self.log_path, "a") as log:
                log.write(json.dumps(record) + "\n")
            if not offers_tools:
                return n, {"text": "ok"}
            if self.taken < len(self.turns):
                self.taken += 1
                return n, self.turns[self.taken - 1]
            return n, {"text": "done"}


class Handler(BaseHTTPRequestHandler):
    """HTTP/1.1, silent; HEAD answers 200; `send_json` and `send_events`
    (server-sent events, the connection closed after them)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_json(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events):
        """Each (name, data) as one event; a name of None sends the data
        line alone."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


def serve(handler, portfile):
    """Serve on a free loopback port, written to `portfile`, until killed."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    with open(portfile, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()
