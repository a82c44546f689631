#!/usr/bin/python3
"""A real WebSocket-only SDK client, Debian's python3-kubernetes, held as a user holds it.

exec `cat` (or a port-forward to the target's echo port): a line, HOLD seconds of silence, another line. Prints one
JSON object: {"works": bool, "protocol": str|null, "error": str|null, "closedAfterSeconds": float|null}.
lab/sdk-client.ts runs it; test/lab/sdk-clients.test.ts compares it with the probe's `sdk` sessions.

Usage: python-client.py SERVER exec|portforward HOLD_SECONDS [PORT]
The client sends no pings of its own (kubernetes/stream/ws_client.py), offers only v4.channel.k8s.io for exec and
port-forwards over the kubelet's legacy WebSocket protocol; it does not read a kubeconfig proxy-url (22.6).
"""
import json
import select
import sys
import time

from kubernetes import client
from kubernetes.stream import portforward, stream

server, operation, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
port = int(sys.argv[4]) if len(sys.argv) > 4 else 8080
# The target has the manifest's three containers: like any caller of the API, the client names one (kube-apiserver
# refuses an exec without it on a pod of several: pod strategy.go validateContainer).
NAMESPACE, POD, CONTAINER = "default", "probe-target", "main"
WAIT = 3.0

config = client.Configuration()
config.host = server
config.verify_ssl = False
api = client.CoreV1Api(client.ApiClient(config))
t0 = time.monotonic()


def agreed(websocket):
    """The subprotocol the server chose: the client sets its offer as a plain header, so read the reply's."""
    response = getattr(websocket, "handshake_response", None)
    return response.headers.get("sec-websocket-protocol") if response else None


def done(works, protocol=None, error=None, closed=None):
    print(json.dumps({"works": works, "protocol": protocol, "error": error, "closedAfterSeconds": closed}))
    sys.exit(0)


def exec_holding():
    try:
        ws = stream(api.connect_get_namespaced_pod_exec, POD, NAMESPACE, container=CONTAINER, command=["cat"], stdin=True, stdout=True,
                    stderr=True, tty=False, _preload_content=False)
    except Exception as e:  # the upgrade failed: ApiException, WebSocketBadStatusException, a refused dial
        done(False, error=f"{type(e).__name__}: {e}")
    protocol = agreed(ws.sock)
    seen = ""

    def arrived(text):
        nonlocal seen
        deadline = time.monotonic() + WAIT
        while text not in seen and ws.is_open() and time.monotonic() < deadline:
            ws.update(timeout=0.1)
            if ws.peek_stdout():
                seen += ws.read_stdout()
        return text in seen

    ws.write_stdin("before\n")
    first = arrived("before")
    if first:
        end = time.monotonic() + hold
        # Read (answering the server's pings, as the client does) without sending anything of ours.
        while ws.is_open() and time.monotonic() < end:
            ws.update(timeout=min(1.0, max(0.0, end - time.monotonic())))
    closed = None if ws.is_open() else round(time.monotonic() - t0, 1)
    second = False
    if first and ws.is_open():
        try:
            ws.write_stdin("after\n")
            second = arrived("after")
        except Exception as e:
            done(False, protocol, f"{type(e).__name__}: {e}", closed)
    if not ws.is_open() and closed is None:
        closed = round(time.monotonic() - t0, 1)
    ws.close()
    done(first and second, protocol, None if first and second else "no echo", closed)


def portforward_holding():
    try:
        pf = portforward(api.connect_get_namespaced_pod_portforward, POD, NAMESPACE, ports=str(port))
        sock = pf.socket(port)
    except Exception as e:
        done(False, error=f"{type(e).__name__}: {e}")
    protocol = agreed(pf.websocket)
    seen = b""

    def arrived(text):
        nonlocal seen
        deadline = time.monotonic() + WAIT
        while text not in seen and time.monotonic() < deadline:
            r, _, _ = select.select([sock], [], [], 0.1)
            if r:
                chunk = sock.recv(4096)
                if not chunk:
                    return False
                seen += chunk
        return text in seen

    try:
        sock.sendall(b"before\n")
        first = arrived(b"before")
        if first:
            time.sleep(hold)
            sock.sendall(b"after\n")
        second = first and arrived(b"after")
    except OSError as e:
        done(False, protocol, f"{type(e).__name__}: {e}", round(time.monotonic() - t0, 1))
    error = pf.error(port)
    sock.close()
    done(bool(second), protocol, None if second else (error or "no echo"))


try:
    exec_holding() if operation == "exec" else portforward_holding()
except Exception as e:  # what the client raised to its user mid-session, e.g. WebSocketConnectionClosedException on a cut
    done(False, error=f"{type(e).__name__}: {e}", closed=round(time.monotonic() - t0, 1))
