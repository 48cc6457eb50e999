"""Ask an installed `memsearch mcp` for its tools, as an MCP client would.

Usage: python mcp_tools_list.py MEMSEARCH_EXE VERSION ROOT

Plain JSON-RPC over the server's stdin/stdout (one message a line), so the
check depends only on the protocol, not on a client library. Prints one
line and exits 0 when serverInfo names memsearch VERSION and tools/list has
memory_search and memory_read; anything else exits 1.
"""

import json
import queue
import subprocess
import sys
import threading

TIMEOUT_S = 60  # the SDK takes seconds to import on a busy machine


# memsearch/tool.py's tools, sorted: memory, then conversation history.
EXPECTED = ["history_search", "memory_read", "memory_search", "read_session_context"]


def main(exe: str, version: str, root: str) -> int:
    server = subprocess.Popen([exe, "mcp", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stdout], daemon=True).start()

    def send(message: dict) -> None:
        server.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        server.stdin.flush()

    def answer(request_id: int) -> dict:
        while True:
            message = json.loads(lines.get(timeout=TIMEOUT_S))
            if message.get("id") == request_id:
                return message

    try:
        send({"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "memsearch-ci", "version": "0"}}})
        info = answer(1)["result"]["serverInfo"]
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/list"})
        tools = sorted(tool["name"] for tool in answer(2)["result"]["tools"])
    finally:
        server.stdin.close()
        try:
            server.wait(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    print(f"mcp: serverInfo {info['name']} {info['version']}, tools/list: {', '.join(tools)}")
    if (info["name"], info["version"]) != ("memsearch", version) or tools != EXPECTED:
        print(f"mcp: expected memsearch {version} with {', '.join(EXPECTED)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
