from minilib.greet import farewell, greet, shout


def test_greet():
    assert greet("Ada") == "Hello, Ada!"


def test_greet_tidies():
    assert greet("  Ada   Lovelace ") == "Hello, Ada Lovelace!"


def test_shout():
    assert shout("ada") == "HELLO, ADA!"


def test_farewell():
    assert farewell("Ada") == "Bye, Ada."
    assert farewell("Ada", formal=True) == "Farewell, Ada."
