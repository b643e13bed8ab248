def test_never_runs():
    pass
