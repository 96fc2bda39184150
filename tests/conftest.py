"""Repository-wide pytest setup: the shared fixtures come from ct_local's pytest plugin."""

pytest_plugins = ["ct_local.pytest_plugin"]
