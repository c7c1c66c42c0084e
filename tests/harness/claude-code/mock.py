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
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from mockapi import Handler, Script, serve  # noqa: E402

script = Script(sys.argv[1], sys.argv[2])


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


class Messages(Handler):
    def do_GET(self):
        self.send_json({})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self.send_json({"input_tokens": 1000})
        if not path.endswith("/v1/messages"):
            return self.send_json({})
        n, turn = script.take(body, body.get("tools"))
        msg = message(n, turn, body.get("model", "claude-mock"))
        if not body.get("stream"):
            return self.send_json(msg)
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
        self.send_events(events)


serve(Messages, sys.argv[3])
