"""ModuleNotFoundError while importing the test module."""
import no_such_module_featbench


def test_never_runs():
    assert no_such_module_featbench
