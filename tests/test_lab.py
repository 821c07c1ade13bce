"""make lab: JupyterLab, started with the settings in lab/ as make lab starts it, serves a chapter
as a notebook with its parameters cell, opens Markdown files as notebooks, and starts a chapter's
kernel in the checkout's root, where the parameters' default paths lead."""

import csv
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "notebooks/04-gbm.md"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Lab:
    def __init__(self, port: int, token: str):
        self.base, self.token = f"http://127.0.0.1:{port}", token

    def call(self, path: str, data: dict | None = None) -> dict:
        request = urllib.request.Request(
            self.base + path,
            data=None if data is None else json.dumps(data).encode(),
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
            method="GET" if data is None else "POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="the lab group is not installed (make test has it)")
    tmp = tmp_path_factory.mktemp("lab")
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_PATH": str(ROOT / "lab"),  # as make lab sets it
        # This run's files, not the user's: connection files, settings, workspaces.
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    root = ["--allow-root"] if os.geteuid() == 0 else []
    log = open(tmp / "lab.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", *root, f"--port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"],
        cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    client = _Lab(port, token)
    deadline = time.monotonic() + 180
    while True:
        try:
            client.call("/api/status")
            break
        except (urllib.error.URLError, ConnectionError):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                log.close()
                pytest.fail("JupyterLab did not start:\n" + (tmp / "lab.log").read_text()[-3000:])
            time.sleep(0.5)
    client.runtime = tmp / "runtime"
    yield client
    proc.terminate()
    proc.wait(timeout=60)
    log.close()


def test_make_lab_starts_jupyterlab_with_these_settings():
    recipe = re.search(r"^lab: .*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)
    assert recipe and "JUPYTER_CONFIG_PATH=$(CURDIR)/lab $(BIN)/jupyter lab" in recipe.group(1)


@pytest.mark.slow  # starts JupyterLab and a kernel (about 15 s)
def test_a_chapter_reads_as_a_notebook_with_its_parameters_cell(lab):
    model = lab.call(f"/api/contents/{CHAPTER}?type=notebook&content=1")
    assert model["type"] == "notebook"
    cells = model["content"]["cells"]
    tagged = [c for c in cells if "parameters" in c["metadata"].get("tags", [])]
    assert len(tagged) == 1 and tagged[0]["cell_type"] == "code"
    # The cell as the Markdown file writes it, read here without jupytext.
    text = (ROOT / CHAPTER).read_text()
    written = re.search(r":tags: \[parameters\]\n\n(.*?)\n```", text, re.S).group(1)
    assert tagged[0]["source"].strip() == written.strip()
    assert "focus_paths = 1000" in tagged[0]["source"]


@pytest.mark.slow  # starts JupyterLab and a kernel (about 15 s)
def test_markdown_opens_as_a_jupytext_notebook_in_the_chapters_folder(lab):
    settings = lab.call("/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
    viewers = settings["schema"]["properties"]["defaultViewers"]["default"]
    assert viewers["markdown"] == "Jupytext Notebook"
    with urllib.request.urlopen(
        urllib.request.Request(lab.base + "/lab", headers={"Authorization": f"token {lab.token}"})
    ) as page:
        assert re.search(r'"preferredPath": *"/?notebooks"', page.read().decode())


@pytest.mark.slow  # starts JupyterLab and a kernel (about 15 s)
def test_a_chapters_kernel_starts_at_the_root_and_reads_the_default_results(lab):
    from jupyter_client import BlockingKernelClient

    session = lab.call(
        "/api/sessions",
        {"path": CHAPTER, "type": "notebook", "name": "04-gbm.md", "kernel": {"name": "python3"}},
    )
    client = BlockingKernelClient(
        connection_file=str(lab.runtime / f"kernel-{session['kernel']['id']}.json")
    )
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        model = lab.call(f"/api/contents/{CHAPTER}?type=notebook&content=1")
        parameters = next(
            c["source"] for c in model["content"]["cells"]
            if "parameters" in c["metadata"].get("tags", [])
        )  # fmt: skip
        code = parameters + (
            "\nimport os\nfrom jacbench.report import data\n"
            "print(os.getcwd())\nprint(len(data.load(results)))\n"
        )
        msg_id = client.execute(code)
        out, errors = "", []
        while True:
            msg = client.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
                out += msg["content"]["text"]
            elif msg["msg_type"] == "error":
                errors.append(f"{msg['content']['ename']}: {msg['content']['evalue']}")
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
    finally:
        client.stop_channels()
    assert not errors
    with open(ROOT / "book" / "reference" / "standard.csv", newline="") as f:
        rows = sum(1 for _ in csv.DictReader(f))
    assert out.split() == [str(ROOT), str(rows)]
