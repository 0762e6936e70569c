from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = 'pip install -e ".[test]" && python -m pytest'
    assert command in readme and command in ci.splitlines()


def test_readme_main_job_is_the_claims_report():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e . && solver verify" in readme
