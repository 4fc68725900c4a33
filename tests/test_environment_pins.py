"""environment.yml (conda / Binder) and pyproject.toml (pip / CI) must pin the same things.

Every package pinned in one file must be pinned in the other, to the same version. The
runtime dependencies and the `test` extra of pyproject.toml are compared with the conda
dependencies plus the `pip:` section of environment.yml. Conda-only entries are handled
here: `python` must match the minor version of requires-python, `openjdk` and `pip` have
no pip counterpart.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
ENVIRONMENT = ROOT / "environment.yml"

# conda-forge name -> PyPI name, where they differ.
CONDA_TO_PIP = {
    "python-graphviz": "graphviz",
    "playwright-python": "playwright",
}
# Conda entries with no PyPI counterpart in pyproject.toml.
CONDA_ONLY = {"python", "openjdk", "pip"}

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*?)\s*(?:;.*)?$")


def normalize(name: str) -> str:
    """PEP 503 name normalisation: `PyYAML`, `pyyaml` and `py_yaml` compare equal."""
    return re.sub(r"[-_.]+", "-", name).lower()


def split_spec(spec: str) -> tuple[str, str | None]:
    """'pandas==2.3.3' -> ('pandas', '2.3.3'); 'pyarrow' or 'numpy>=2' -> (name, None)."""
    spec = spec.split("#", 1)[0].strip()
    m = _REQ.match(spec)
    if not m:
        raise ValueError(f"cannot parse requirement {spec!r}")
    name, rest = m.group(1), m.group(2).replace(" ", "")
    # `==2.3.3` (pip and conda exact) or conda's `=2.3.3` (2.3.3 or 2.3.3.x) count as pinned;
    # ranges and wildcards such as `>=2`, `=4.*` do not.
    pin = re.fullmatch(r"==?([^=<>!~*,]+)", rest)
    return name, (pin.group(1) if pin else None)


def pyproject_pins() -> dict[str, tuple[str, str | None]]:
    """normalised name -> (name as written, exact version or None)."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    specs = list(project.get("dependencies", []))
    specs += project.get("optional-dependencies", {}).get("test", [])
    pins = {}
    for spec in specs:
        name, version = split_spec(spec)
        pins[normalize(name)] = (name, version)
    return pins


def environment_entries() -> tuple[dict[str, tuple[str, str | None]], dict[str, str | None]]:
    """(pip-comparable pins, conda-only entries) read from environment.yml."""
    env = yaml.safe_load(ENVIRONMENT.read_text())
    pins: dict[str, tuple[str, str | None]] = {}
    conda_only: dict[str, str | None] = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for spec in dep.get("pip", []):
                spec = spec.strip()
                if spec.startswith("-"):  # -e ., --index-url and friends
                    continue
                name, version = split_spec(spec)
                pins[normalize(name)] = (f"{name} (pip: section)", version)
            continue
        name, rest = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$", str(dep)).groups()
        if name in CONDA_ONLY:
            conda_only[name] = rest.lstrip("=").split(",")[0].strip() or None
            continue
        _, version = split_spec(str(dep))
        pins[normalize(CONDA_TO_PIP.get(name, name))] = (name, version)
    return pins, conda_only


def test_both_files_pin_every_package_exactly():
    problems = []
    for label, pins in (("pyproject.toml", pyproject_pins()), ("environment.yml", environment_entries()[0])):
        for written, version in pins.values():
            if version is None:
                problems.append(f"{label}: {written} is not pinned with ==")
    assert not problems, "\n".join(problems)


def test_environment_yml_and_pyproject_pin_the_same_versions():
    pip_pins = pyproject_pins()
    conda_pins, _ = environment_entries()
    problems = []
    for key in sorted(set(pip_pins) | set(conda_pins)):
        if key not in conda_pins:
            name, version = pip_pins[key]
            problems.append(f"{name}: pyproject.toml pins {version}, environment.yml does not list it")
        elif key not in pip_pins:
            name, version = conda_pins[key]
            problems.append(f"{name}: environment.yml pins {version}, pyproject.toml does not list it")
        elif pip_pins[key][1] != conda_pins[key][1]:
            problems.append(
                f"{pip_pins[key][0]}: pyproject.toml pins {pip_pins[key][1]}, "
                f"environment.yml ({conda_pins[key][0]}) pins {conda_pins[key][1]}"
            )
    assert not problems, "environment.yml and pyproject.toml disagree:\n" + "\n".join(problems)


def test_conda_python_matches_requires_python():
    _, conda_only = environment_entries()
    requires = tomllib.loads(PYPROJECT.read_text())["project"]["requires-python"]
    m = re.fullmatch(r">=\s*(\d+)\.(\d+)(?:\.\d+)?", requires.strip())
    assert m, f"requires-python {requires!r}: expected the form '>=3.X'"
    wanted = f"{m.group(1)}.{m.group(2)}"
    assert "python" in conda_only, "environment.yml does not pin python"
    assert conda_only["python"] == wanted, (
        f"python: pyproject.toml requires-python is {requires!r} (so {wanted}), "
        f"environment.yml pins python={conda_only['python']}"
    )


def test_conda_has_java_17_and_editable_install():
    env = yaml.safe_load(ENVIRONMENT.read_text())
    _, conda_only = environment_entries()
    assert conda_only.get("openjdk") == "17", "environment.yml must pin openjdk=17 (PySpark 4 needs Java 17+)"
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert any("-e ." in [s.strip() for s in sec] for sec in pip_sections), "environment.yml needs `- -e .` under pip:"
    assert env["channels"] == ["conda-forge", "nodefaults"], env["channels"]


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("pandas==2.3.3", ("pandas", "2.3.3")),
        ("pandas = 2.3.3", ("pandas", "2.3.3")),
        ("pyarrow", ("pyarrow", None)),
        ("numpy>=2,<3", ("numpy", None)),
        ("pyspark=4.*", ("pyspark", None)),
        ("kafka-python==3.0.12  # comment", ("kafka-python", "3.0.12")),
        ("PyYAML[libyaml]==6.0.3", ("PyYAML", "6.0.3")),
    ],
)
def test_split_spec(spec, expected):
    assert split_spec(spec) == expected
