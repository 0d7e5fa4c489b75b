"""A loopback model server speaking Anthropic's Messages wire (streamed
SSE), as zr-cli's tests' loopback server does: each test scripts the model
as a function of the request body, and reads back what zr sent."""

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

Answer = Tuple[Optional[str], List[Tuple[str, str, Dict[str, Any]]]]


def sse(text: Optional[str], tools: List[Tuple[str, str, Dict[str, Any]]]) -> bytes:
    """The SSE of one answer: ``text``, then tool calls (id, name, input)."""
    events: List[Dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "content": [],
                                              "model": "claude-test", "stop_reason": None,
                                              "usage": {"input_tokens": 10, "output_tokens": 1}}},
    ]
    index = 0
    if text is not None:
        events += [
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}},
            {"type": "content_block_stop", "index": index},
        ]
        index += 1
    for call_id, name, arguments in tools:
        events += [
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "input_json_delta", "partial_json": json.dumps(arguments)}},
            {"type": "content_block_stop", "index": index},
        ]
        index += 1
    events += [
        {"type": "message_delta", "delta": {"stop_reason": "tool_use" if tools else "end_turn"},
         "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class Model:
    """The server; ``answer(body) -> (text, tool calls)``."""

    def __init__(self, answer: Callable[[Dict[str, Any]], Answer]):
        self.answer = answer
        self.requests: List[Dict[str, Any]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                model.requests.append(body)
                text, tools = model.answer(body)
                payload = sse(text, tools)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(payload)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def env(self) -> Dict[str, str]:
        return {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": self.url}


def system(body: Dict[str, Any]) -> str:
    return json.dumps(body.get("system"))


def turns(body: Dict[str, Any]) -> int:
    return len(body.get("messages", []))


@pytest.fixture
def project(tmp_path):
    """An empty project folder (no zr.toml: zr's defaults)."""
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        os.environ.pop(var, None)
    os.environ["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    work = tmp_path / "project"
    work.mkdir()
    return str(work)
