"""Another local user (``nobody``) going after the embedded Valkey's address.

The tests run as root; these helpers run the system Python as ``nobody``
(``setpriv``), with the standard library only, to try what an unprivileged
user of the same machine could: dial the socket, bind its path, or listen on
a re-created directory of the same name and collect whatever a client sends.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
PYTHON = "/usr/bin/python3"

TRY = textwrap.dedent(
    """
    import socket, sys
    action, path = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if action == "connect":
            s.connect(path)
        else:
            s.bind(path)
        print("ok")
    except OSError as exc:
        print(type(exc).__name__)
    """
)

LISTEN = textwrap.dedent(
    """
    import os, socket, sys
    path = sys.argv[1]
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    os.chmod(os.path.dirname(path), 0o755)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o777)
    s.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = s.accept()
        conn.settimeout(1.0)
        try:
            data = conn.recv(4096)
        except OSError:
            data = b""
        print("conn", data.hex(), flush=True)
        conn.close()
    """
)


def nobody_tries(action: str, path: Path) -> str:
    """``ok`` when ``nobody`` could ``connect`` to / ``bind`` ``path``, else the error's name."""
    done = subprocess.run(
        [*NOBODY, PYTHON, "-c", TRY, action, str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
        check=False,
    )
    return done.stdout.strip() or done.stderr.strip()


class Impostor:
    """``nobody`` listening on ``path`` (its directory re-created as theirs), keeping a line
    for every connection it accepts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.proc = subprocess.Popen(
            [*NOBODY, PYTHON, "-u", "-c", LISTEN, str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd="/",
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # "ready" once it listens
        if line.strip() != "ready":
            self.proc.kill()
            _, err = self.proc.communicate(timeout=10)
            raise AssertionError(f"impostor did not start: {line!r} {err}")

    def stop(self) -> list[str]:
        """Stop it; the connections it accepted (one ``conn <hex of what was sent>`` each)."""
        self.proc.kill()
        out, _ = self.proc.communicate(timeout=10)
        return [line for line in out.splitlines() if line.startswith("conn")]
