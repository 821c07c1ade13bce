"""The dependency pins live in pyproject.toml; environment.yml must mirror them exactly."""

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


# The optional groups environment.yml mirrors: all but the GitHub workflow's own.
MIRRORED = ("book", "test", "lab", "cluster")


def _pins(deps: list[str]) -> dict[str, str]:
    pins = {}
    for dep in deps:
        name, sep, version = dep.partition("==")
        assert sep, f"{dep!r} is not pinned exactly"
        pins[name.strip().lower()] = version.strip()
    return pins


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _pyproject_pins() -> dict[str, str]:
    """The dependencies' pins and the mirrored groups'; a package in two groups (jupytext, in
    the book's and the lab's) has one pin."""
    project = _project()
    pins = _pins(project["dependencies"])
    for group in MIRRORED:
        for name, version in _pins(project["optional-dependencies"][group]).items():
            assert pins.setdefault(name, version) == version, f"{name} pinned twice, differently"
    return pins


def test_every_group_is_pinned_and_the_test_tools_are_no_dependency_of_the_book():
    groups = _project()["optional-dependencies"]
    assert set(groups) == {*MIRRORED, "workflows"}
    for deps in groups.values():
        _pins(deps)
    # The test tools are not needed to measure or to build the book.
    assert not {"pytest", "ruff", "playwright"} & set(_pins(_project()["dependencies"]))
    assert not {"pytest", "ruff", "playwright"} & set(_pins(groups["book"]))


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
