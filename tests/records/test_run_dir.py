"""The notebooks' KGYM_RUN_DIR: a relative path given where `jupyter lab` was typed still finds the run
when the kernel starts in notebooks/ (issue 31: README's command failed at the first cell)."""

from kgym.records.run_dir import REPO_ROOT, run_dir


def test_a_relative_run_dir_is_found_from_the_launch_dir(tmp_path):
    (tmp_path / "out" / "demo").mkdir(parents=True)
    kernel_cwd = tmp_path / "notebooks"
    kernel_cwd.mkdir()
    env = {"KGYM_RUN_DIR": "out/demo", "PWD": str(tmp_path)}
    assert run_dir("x", env=env, cwd=kernel_cwd) == str(tmp_path / "out" / "demo")


def test_the_repo_root_then_the_path_as_given():
    assert run_dir("x", env={"KGYM_RUN_DIR": "notebooks"}, cwd="/") == str(REPO_ROOT / "notebooks")
    assert run_dir("out/none", env={}, cwd="/") == "out/none"  # nowhere: the error will name it as given
    assert run_dir("x", env={"KGYM_RUN_DIR": "s3://b/runs"}) == "s3://b/runs"
    assert run_dir("/abs/run", env={}) == "/abs/run"
