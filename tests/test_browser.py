"""One real-browser test: the notebooks and the control panel, once in a real browser.

Starts JupyterLab on 127.0.0.1 with a fresh token, opens a notebook in headless Chromium
(Debian's `/usr/bin/chromium` driven by Playwright; Playwright never downloads a browser here),
runs every cell, clicks the control panel's crash button and waits until the live member table and
the group diagram show what the crash led to.

Skipped where `/usr/bin/chromium` is missing; `.ci/run` installs it so CI always runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason="Debian's chromium is not installed (.ci/run installs it)"),
]

# Flags that keep Chromium quiet on a machine with no outside network (see env notes).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]

# A short lesson-shaped notebook: a stable group of two consumers and the control panel.
NOTEBOOK_CELLS = [
    "from coordinator_kit.scenarios import run_scenario\n"
    "from coordinator_kit.viz import ControlPanel\n"
    "cluster = run_scenario('second-joins')\n"
    "panel = ControlPanel(cluster)\n"
    "panel",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_notebook(path: Path) -> None:
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"cell-{i}",
                   "metadata": {}, "outputs": [], "source": src}
                  for i, src in enumerate(NOTEBOOK_CELLS)],
        "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)",
                                    "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1))


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A JupyterLab server on loopback serving a temp folder with the test notebook."""
    root = tmp_path_factory.mktemp("lab")
    _write_notebook(root / "panel.ipynb")
    port, token = _free_port(), "ck-browser-test"
    jupyter = Path(sys.executable).with_name("jupyter")
    cmd = [str(jupyter), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}",
           "--ServerApp.open_browser=False", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(root / ".jupyter-config"),
               JUPYTER_RUNTIME_DIR=str(root / ".jupyter-runtime"))
    log = (root / "jupyter.log").open("w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start; its log:\n"
                                       + (root / "jupyter.log").read_text()) from None
                time.sleep(0.25)
        yield f"{base}/lab/tree/panel.ipynb?token={token}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_crash_button_changes_member_table_and_diagram(lab: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    assert shutil.which(CHROMIUM) or Path(CHROMIUM).exists()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(60_000)
            page.goto(lab)
            # Wait for the notebook and its kernel, then run every cell from the Run menu.
            page.wait_for_selector(".jp-Notebook .jp-Cell")
            # A fresh JupyterLab may ask which kernel to start; take the notebook's own.
            select = page.get_by_role("button", name="Select", exact=True)
            try:
                select.wait_for(timeout=10_000)
                select.click()
            except sync_api.TimeoutError:
                pass
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_text("Run All Cells", exact=True).click()

            table = page.locator(".ck-member-table").first
            table.wait_for()
            page.locator(".ck-diagram").first.wait_for()
            before = table.inner_text()
            assert "consumer-1" in before and "STABLE" in before, before
            diagram_before = page.locator(".ck-group-diagram").first.inner_html()

            page.locator("button.ck-crash").first.click()
            # The crash shows at once in the member table (the consumer is down) ...
            page.wait_for_function(
                "t => document.querySelector('.ck-member-table').innerText !== t",
                arg=before, timeout=30_000)
            # ... the group only notices when the session times out: advance 60 s of virtual time
            # and the group diagram moves (PreparingRebalance, then Stable at a new generation).
            page.locator(".ck-advance-ms input").first.fill("60000")
            page.locator(".ck-advance-ms input").first.press("Enter")
            page.locator("button.ck-advance").first.click()
            page.wait_for_function(
                "h => document.querySelector('.ck-group-diagram').innerHTML !== h",
                arg=diagram_before, timeout=30_000)
            after = table.inner_text()
            assert after != before
            if os.environ.get("CK_BROWSER_SHOT"):   # look at it: CK_BROWSER_SHOT=/tmp/ok.png
                page.screenshot(path=os.environ["CK_BROWSER_SHOT"], full_page=True)
        except Exception:
            shot = Path(os.environ.get("CK_BROWSER_FAILURE_SHOT", "/tmp/ck-browser-failure.png"))
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failure: {shot}")
            raise
        finally:
            browser.close()
