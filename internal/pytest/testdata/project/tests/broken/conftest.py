"""conftest.py that fails to import: pytest stops before collecting."""
import no_such_module_in_conftest  # noqa: F401
