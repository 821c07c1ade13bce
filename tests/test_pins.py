"""The dependency pins live in pyproject.toml; environment.yml must mirror them exactly."""

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_pins() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = {}
    for dep in deps:
        name, sep, version = dep.partition("==")
        assert sep, f"{dep!r} is not pinned exactly"
        pins[name.strip().lower()] = version.strip()
    return pins


def _environment_pins() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    pins = {}
    for dep in pip:
        if dep.startswith("-"):
            continue
        name, sep, version = dep.partition("==")
        assert sep, f"environment.yml: {dep!r} is not pinned exactly"
        pins[name.strip().lower()] = version.strip()
    return pins


def test_environment_yml_mirrors_pyproject():
    assert _environment_pins() == _pyproject_pins()


def test_environment_yml_python_matches():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]


def test_torch_is_the_pinned_cpu_release():
    assert _pyproject_pins()["torch"] == "2.13.0"
