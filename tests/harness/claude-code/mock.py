#!/usr/bin/env python3
"""A scripted mock of the Anthropic Messages API on loopback, for running
the real Claude Code CLI offline against git-handoff.

Usage: mock.py SCRIPT.json LOG.jsonl PORTFILE

SCRIPT.json is a list of turns; each POST /v1/messages that offers tools
(the agent loop) takes the next turn, any other (titles, summaries) gets a
short text. A turn is {"text": "..."} or {"tool": NAME, "input": {...}}
(answered as one tool_use block), streamed as server-sent events when the
request asks for a stream. Every request body is appended to LOG.jsonl.
The port it listens on (127.0.0.1, chosen by the system) goes to PORTFILE.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[1]))
log_path = sys.argv[2]
lock = threading.Lock()
state = {"turn": 0, "id": 0}


def next_turn(body):
    with lock:
        state["id"] += 1
        n = state["id"]
        with open(log_path, "a") as log:
            log.write(json.dumps(body) + "\n")
        if not body.get("tools"):
            return n, {"text": "ok"}
        if state["turn"] < len(script):
            turn = script[state["turn"]]
            state["turn"] += 1
            return n, turn
        return n, {"text": "done"}


def message(n, turn, model):
    if "tool" in turn:
        block = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": turn["tool"], "input": turn.get("input", {})}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": turn["text"]}
        stop = "end_turn"
    return {
        "id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": model,
        "content": [block], "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 1000, "output_tokens": 10,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.send_json({})

    def send_json(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self.send_json({"input_tokens": 1000})
        if not path.endswith("/v1/messages"):
            return self.send_json({})
        n, turn = next_turn(body)
        msg = message(n, turn, body.get("model", "claude-mock"))
        if not body.get("stream"):
            return self.send_json(msg)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        block = msg["content"][0]
        start = dict(msg, content=[], stop_reason=None)
        events = [("message_start", {"type": "message_start", "message": start})]
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": dict(block, input={})}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                                         "usage": {"output_tokens": 10}}))
        events.append(("message_stop", {"type": "message_stop"}))
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[3], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
