#!/usr/bin/env python3
"""Runs a command beside a real cache server on loopback, then stops the server, also when the
command fails or the test is interrupted.

Usage: with_server.py KIND WORKDIR -- COMMAND [ARGS...]

KIND is `redis` (redis-server), `nginx` (nginx with WebDAV PUT, the Bazel HTTP cache layout) or
`silent` (a socket that accepts connections and never answers, served by this script). The
server's files (configuration, data, logs) live in WORKDIR only. The port is ephemeral: one the
kernel hands out for a bind to port 0, retried when the server loses the race for it. The
command sees SERVER_URL, SERVER_PORT, SERVER_PID (the server's process, for tests that kill it)
and SERVER_DATA (nginx's document root) in its environment, and `@NAME@` in its arguments
becomes the value of NAME (lit's shell expands no variables). Exits with the command's exit code.
"""
import ctypes
import os
import signal
import socket
import subprocess
import sys
import threading
import time

START_TIMEOUT = 60  # seconds: a loaded 2-core machine can be slow to start a server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    # The server must not outlive this script, even if the script is killed.
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def answers(port, probe, expect):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(probe)
            return s.recv(64).startswith(expect)
    except OSError:
        return False


NGINX_CONF = """daemon off;
master_process off;
worker_processes 1;
user root;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {work}/tmp;
  proxy_temp_path {work}/tmp;
  fastcgi_temp_path {work}/tmp;
  uwsgi_temp_path {work}/tmp;
  scgi_temp_path {work}/tmp;
  client_max_body_size 0;
  server {{
    listen 127.0.0.1:{port};
    root {work}/data;
    location / {{
      dav_methods PUT DELETE;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
    }}
  }}
}}
"""


def start(kind, work, port):
    log = open(os.path.join(work, kind + ".out"), "ab")
    if kind == "redis":
        cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", work, "--save", "",
               "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no", "--logfile", ""]
        probe, expect = b"PING\r\n", b"+PONG"
        url = f"redis://127.0.0.1:{port}/0"
    else:
        os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
        os.makedirs(os.path.join(work, "data", "cache"), exist_ok=True)
        conf = os.path.join(work, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(work=work, port=port))
        cmd = ["nginx", "-p", work, "-c", conf, "-e", os.path.join(work, "error.log")]
        probe, expect = b"GET / HTTP/1.0\r\n\r\n", b"HTTP/"
        url = f"http://127.0.0.1:{port}/cache"
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return None, None  # lost the port, or a broken setup: the caller retries
        if answers(port, probe, expect):
            return proc, url
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    return None, None


def silent_server():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []

    def accept():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)  # never read, never answered, never closed

    threading.Thread(target=accept, daemon=True).start()
    return listener, listener.getsockname()[1]


def stop(proc):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    kind, work = sys.argv[1], os.path.abspath(sys.argv[2])
    if sys.argv[3] != "--":
        sys.exit("usage: with_server.py KIND WORKDIR -- COMMAND...")
    command = sys.argv[4:]
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ)
    proc = None
    if kind == "silent":
        _, port = silent_server()
        env["SERVER_URL"] = f"http://127.0.0.1:{port}/cache"
        env["SERVER_REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
        env["SERVER_PORT"] = str(port)
    else:
        for _ in range(10):
            port = free_port()
            proc, url = start(kind, work, port)
            if proc:
                break
        if not proc:
            sys.exit(f"with_server: {kind} did not start; see {work}")
        env.update(SERVER_URL=url, SERVER_PORT=str(port), SERVER_PID=str(proc.pid),
                   SERVER_DATA=os.path.join(work, "data"))

    def on_signal(signum, _frame):
        stop(proc)
        sys.exit(128 + signum)

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    for name in ("SERVER_URL", "SERVER_REDIS_URL", "SERVER_PORT", "SERVER_PID", "SERVER_DATA"):
        command = [a.replace(f"@{name}@", env[name]) if name in env else a for a in command]
    try:
        rc = subprocess.call(command, env=env)
    finally:
        stop(proc)
    sys.exit(rc)


if __name__ == "__main__":
    main()
