#!/usr/bin/env python3
"""A scripted mock model on loopback for running the real Codex CLI (OpenAI
Responses API) and Gemini CLI (Gemini generateContent API) offline against
git-handoff.

Usage: mock.py SCRIPT.json LOG.jsonl PORTFILE

SCRIPT.json is a list of turns; each model call that offers tools (the
agent loop) takes the next turn, any other call (a router, a title, a
next-speaker check) gets a short text. A turn is {"text": "..."},
{"custom": NAME, "input": "..."} (Codex: a call of a freeform tool such as
apply_patch, its input verbatim) or
{"tool": NAME, "input": {...}}: one function call, to the offered tool
named NAME or, failing that, the one whose name ends in "_" + NAME (so
"resume" finds "mcp__git-handoff__resume" or "mcp_git-handoff_resume").
Every request ({"path", "body"}) is appended to LOG.jsonl; the port it
listens on (127.0.0.1, chosen by the system) goes to PORTFILE.

Codex: POST .../responses, answered as server-sent events ending in
response.completed. Gemini: POST .../models/M:streamGenerateContent
(server-sent events) or :generateContent, :countTokens.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "common"))
from mockapi import Handler, Script, serve  # noqa: E402

script = Script(sys.argv[1], sys.argv[2])


def next_turn(path, body, tool_names):
    """The call's number and turn; a tool named in the turn resolved to the
    offered one it names."""
    n, turn = script.take({"path": path, "body": body}, tool_names)
    if "tool" in turn:
        name = turn["tool"]
        if name not in tool_names:
            ends = [t for t in tool_names if t.endswith("_" + name) or t.endswith("." + name)]
            name = ends[0] if ends else name
        turn = dict(turn, tool=name)
    return n, turn


def openai_tool_names(body):
    """The tools offered, with those a tool_search found earlier in the
    conversation (they come back as tool_search_output items)."""
    names = []
    found = [t for item in body.get("input") or [] if item.get("type") == "tool_search_output"
             for t in item.get("tools") or []]
    for tool in (body.get("tools") or []) + found:
        if tool.get("type") == "function":
            names.append(tool.get("name") or tool.get("function", {}).get("name"))
        for sub in tool.get("tools") or []:  # a namespace of tools: NS.NAME
            names.append(tool["name"] + "." + sub.get("name"))
    return [n for n in names if n]


def gemini_tool_names(body):
    return [f["name"] for tool in body.get("tools") or [] for f in tool.get("functionDeclarations") or []]


def fill(schema):
    """The smallest value a JSON schema (OpenAPI or Gemini type names) accepts."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        return {k: fill(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    return {"string": "mock", "integer": 1, "number": 1, "boolean": False}.get(kind)


class Models(Handler):
    def do_GET(self):
        if self.path.split("?")[0].endswith("/models"):
            return self.send_json({"object": "list", "data": [], "models": []})
        self.send_json({})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) or b"{}"
        if self.headers.get("Content-Encoding") == "zstd":
            return self.send_json({"error": {"message": "zstd bodies are not supported"}}, 400)
        body = json.loads(raw)
        path = self.path.split("?")[0]
        if path.endswith(":countTokens"):
            return self.send_json({"totalTokens": 1000})
        if path.endswith(":generateContent") or path.endswith(":streamGenerateContent"):
            return self.gemini(path, body)
        if path.endswith("/responses"):
            return self.openai(path, body)
        return self.send_json({})

    def gemini(self, path, body):
        n, turn = next_turn(path, body, gemini_tool_names(body))
        gen = body.get("generationConfig") or {}
        if "tool" in turn:
            part = {"functionCall": {"name": turn["tool"], "args": turn.get("input", {})}}
        elif gen.get("responseMimeType") == "application/json":
            # A structured side call (router, next-speaker check): the
            # smallest answer its schema accepts.
            part = {"text": json.dumps(fill(gen.get("responseJsonSchema") or gen.get("responseSchema") or {}))}
        else:
            part = {"text": turn["text"]}
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 10, "totalTokenCount": 1010},
            "modelVersion": "gemini-mock", "responseId": f"resp_{n:04d}",
        }
        if path.endswith(":streamGenerateContent"):
            return self.send_events([(None, chunk)])
        return self.send_json(chunk)

    def openai(self, path, body):
        n, turn = next_turn(path, body, openai_tool_names(body))
        rid = f"resp_{n:04d}"
        if "tool_search" in turn:
            item = {"type": "tool_search_call", "id": f"ts_{n:04d}", "call_id": f"call_{n:04d}",
                    "execution": "client", "status": "completed",
                    "arguments": {"query": turn["tool_search"], "limit": turn.get("limit", 20)}}
        elif "custom" in turn:
            item = {"type": "custom_tool_call", "id": f"ctc_{n:04d}", "call_id": f"call_{n:04d}",
                    "name": turn["custom"], "input": turn["input"], "status": "completed"}
        elif "tool" in turn:
            namespace, _, name = turn["tool"].rpartition(".")
            item = {"type": "function_call", "id": f"fc_{n:04d}", "call_id": f"call_{n:04d}",
                    "name": name, "arguments": json.dumps(turn.get("input", {})), "status": "completed"}
            if namespace:
                item["namespace"] = namespace
        else:
            item = {"type": "message", "id": f"msg_{n:04d}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": turn["text"], "annotations": []}]}
        usage = {"input_tokens": 1000, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 1010}
        response = {"id": rid, "object": "response", "status": "in_progress", "model": body.get("model"), "output": []}
        self.send_events([
            ("response.created", {"type": "response.created", "response": response}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": dict(response, status="completed", output=[item], usage=usage)}),
        ])


serve(Models, sys.argv[3])
