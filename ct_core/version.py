"""The version of ct, written once: the build reads it from here (hatch's dynamic version), and
`ct_core.__version__` re-exports it. A leaf module, so that the modules of ct_core that need the
version (the User-Agent, plugin listings) never import the package's own `__init__`."""

__version__ = "0.1.0"
