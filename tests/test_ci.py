"""The GitHub Actions workflow: it follows GitHub's schema (check-jsonschema, here and there),
it runs actionlint on itself (where actionlint installs) and make test on every push and pull
request, and on the main branch builds the book and deploys it with GitHub Pages."""

import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def _workflow() -> dict:
    (path,) = WORKFLOWS
    # YAML 1.1 reads the key "on" as True.
    data = yaml.safe_load(path.read_text())
    data["on"] = data.pop(True, data.get("on"))
    return data


def _schema_check(*paths: Path) -> subprocess.CompletedProcess:
    """check-jsonschema (the test group) on workflow files, against the GitHub-workflow schema
    it vendors: no network."""
    binary = Path(sys.executable).parent / "check-jsonschema"
    command = [str(binary), "--builtin-schema", "vendor.github-workflows", *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT)


def test_the_workflows_follow_githubs_schema():
    assert WORKFLOWS
    proc = _schema_check(*WORKFLOWS)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_fails_on_a_planted_error(tmp_path):
    wf = _workflow()
    wf["jobs"]["broken"] = {"steps": [{"run": "true"}]}  # a job with nowhere to run: no runs-on
    planted = tmp_path / "broken.yml"
    planted.write_text(yaml.safe_dump(wf, sort_keys=False))
    proc = _schema_check(planted)
    assert proc.returncode != 0 and "broken" in proc.stdout + proc.stderr


def test_every_push_and_pull_request_runs_make_test_after_the_debian_packages():
    wf = _workflow()
    assert {"push", "pull_request"} <= set(wf["on"])
    test = wf["jobs"]["test"]
    assert "if" not in test
    assert test["container"].startswith("python:3.11-")
    runs = [s.get("run", "") for s in test["steps"]]
    # actionlint where it installs (make actionlint: the workflows group), then the tests.
    assert runs.index(".ci/packages") < runs.index("make actionlint") < runs.index("make test")
    cache = next(s for s in test["steps"] if s.get("uses", "").startswith("actions/cache@"))
    assert cache["with"]["path"] == "~/.cache/uv"
    assert "hashFiles('pyproject.toml')" in cache["with"]["key"]


def test_torch_comes_from_pytorchs_cpu_index():
    env = _workflow()["env"]
    # uv installs the groups (tests/test_setup.py): its variables, and the best match over both
    # indexes, as pip picks.
    assert env["UV_INDEX"] == "https://download.pytorch.org/whl/cpu"
    assert env["UV_INDEX_STRATEGY"] == "unsafe-best-match"


def test_the_main_branch_builds_the_book_and_deploys_it_with_pages():
    jobs = _workflow()["jobs"]
    book, deploy = jobs["book"], jobs["deploy"]
    assert "refs/heads/main" in book["if"] and book["needs"] == "test"
    assert "make book" in [s.get("run") for s in book["steps"]]
    uses = [s.get("uses", "") for s in book["steps"]]
    assert any(u.startswith("actions/configure-pages@") for u in uses)
    upload = next(s for s in book["steps"] if s.get("uses", "").startswith("actions/upload-pages"))
    assert upload["with"]["path"] == "_build/html"
    assert deploy["needs"] == "book"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")


def test_actions_are_pinned_by_major_version():
    for job in _workflow()["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"actions/[\w-]+@v\d+", step["uses"]), step["uses"]
