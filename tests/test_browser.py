"""One real-browser test: the notebooks and the control panel, once in a real browser.

Starts JupyterLab on 127.0.0.1 with a fresh token, opens a notebook in headless Chromium
(Debian's `/usr/bin/chromium` driven by Playwright; Playwright never downloads a browser here),
runs every cell, clicks the control panel's crash button, lets the coordinator notice, then scrubs
back before the crash and reads the cluster view's state from the page (its SVG carries each
consumer's and group's state as data-* attributes).

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


def _consumer(page, name: str):
    return page.locator(f'.ck-cluster-view g[data-consumer="{name}"]').first


def _advance(page, ms: int) -> None:
    field = page.locator(".ck-advance-ms input").first
    field.fill(str(ms))
    field.press("Enter")
    page.locator("button.ck-advance").first.click()


def test_crash_then_scrub_back_before_it(lab: str) -> None:
    """A learner's story: crash consumer-1 at 25 s, watch the coordinator remove it when its
    session times out (a new generation), then drag time back to 22 s: the cluster view shows
    consumer-1 running in generation 2 again."""
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

            view = page.locator(".ck-cluster-view svg").first
            view.wait_for()
            assert _consumer(page, "consumer-1").get_attribute("data-process") == "running"
            group = page.locator(".ck-cluster-view g.ck-group").first
            assert group.get_attribute("data-generation") == "2"

            _advance(page, 5_000)
            page.wait_for_selector('.ck-cluster-view svg[data-now-ms="25000"]')
            page.locator("button.ck-crash").first.click()
            page.wait_for_selector(
                '.ck-cluster-view g[data-consumer="consumer-1"][data-process="crashed"]')
            # The group only notices when the session times out (45 s after the last heartbeat
            # that reached it): advance 60 s and it rebalances into generation 3.
            _advance(page, 60_000)
            page.wait_for_selector('.ck-cluster-view g.ck-group[data-generation="3"]')

            # Scrub back before the crash: type the time into the scrubber's readout.
            readout = page.locator(".ck-scrubber .widget-readout").first
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type("22000")
            page.keyboard.press("Enter")
            page.wait_for_selector('.ck-cluster-view svg[data-now-ms="22000"]')
            assert _consumer(page, "consumer-1").get_attribute("data-process") == "running"
            assert page.locator(".ck-cluster-view g.ck-group").first.get_attribute(
                "data-generation") == "2"
            if os.environ.get("CK_BROWSER_SHOT"):   # look at it: CK_BROWSER_SHOT=/tmp/ok.png
                page.screenshot(path=os.environ["CK_BROWSER_SHOT"], full_page=True)
        except Exception:
            shot = Path(os.environ.get("CK_BROWSER_FAILURE_SHOT", "/tmp/ck-browser-failure.png"))
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failure: {shot}")
            raise
        finally:
            browser.close()
