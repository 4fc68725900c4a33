"""The public names each package promises in `__all__` exist (after trio's test_exports)."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = ["coordinator_kit.errors", "coordinator_kit.clock", "coordinator_kit.states",
            "coordinator_kit.trace", "coordinator_kit.topic", "coordinator_kit.logs",
            "coordinator_kit.timeline", "coordinator_kit.runtime", "coordinator_kit.viz",
            "coordinator_kit.group", "coordinator_kit.client", "coordinator_kit.assignors",
            "coordinator_kit.cluster", "coordinator_kit.scenarios", "coordinator_kit.invariants",
            "coordinator_kit.committed",
            "coordinator_kit.recording", "coordinator_kit.predict", "coordinator_kit.feedback"]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_exists(name):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported, f"{name} has no __all__"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names missing attributes: {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"


def test_core_does_not_import_jupyter_spark_or_graphviz():
    """Layers only point down: the core runs without the notebook stack."""
    import subprocess
    import sys

    code = ("import sys, coordinator_kit.runtime, coordinator_kit.runtime.sandbox, "
            "coordinator_kit.timeline, coordinator_kit.logs, coordinator_kit.trace, "
            "coordinator_kit.cluster, coordinator_kit.scenarios, coordinator_kit.recording, "
            "coordinator_kit.predict\n"
            "bad = [m for m in ('pyspark', 'graphviz', 'ipywidgets', 'IPython', 'pandas') "
            "if m in sys.modules]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core imported {out.stdout.strip()}"


def test_the_widgets_do_not_import_the_lessons():
    """Layers point down: lessons use the pictures and widgets, never the other way round."""
    import subprocess
    import sys

    code = ("import sys, coordinator_kit.viz.panel, coordinator_kit.viz.cluster_view\n"
            "print(','.join(m for m in sys.modules if m.startswith('coordinator_kit.lessons')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"viz imported {out.stdout.strip()}"
