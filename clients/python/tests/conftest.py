import os
import socket
import subprocess
import sys
import tempfile
import time

import httpx
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "src"))


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _start(extra_config=""):
    binary = os.environ.get("CONTEXTD_BIN", os.path.join(REPO, "bin", "contextd"))
    if not os.path.exists(binary):
        pytest.fail(f"contextd binary not found at {binary}: run `make build` (make test-python does)")
    work = tempfile.mkdtemp(prefix="contextd-py-")
    port = _free_port()
    args = [binary, "serve"]
    if extra_config:
        cfg = os.path.join(work, "agents.yaml")
        with open(cfg, "w") as f:
            f.write(extra_config)
        args += ["--config", cfg]
    env = dict(os.environ, CONTEXTD_ADDR=f"127.0.0.1:{port}")
    proc = subprocess.Popen(args, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    pytest.fail("contextd did not start")


@pytest.fixture(scope="session")
def server():
    proc, url = _start()
    yield url
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="session")
def keyed_server():
    proc, url = _start("server:\n  auth:\n    api_keys:\n      - {key: secret-key-for-tests-1, tenant: t1}\n")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="session")
def summarising_server():
    # Two recent turns: a summary refresh has older turns to work on.
    proc, url = _start("supervisor:\n  memory: {summary_recent_turns: 2}\n")
    yield url
    proc.terminate()
    proc.wait(timeout=30)
