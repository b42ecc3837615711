"""Lets `clients/python` on sys.path import the package that lives in
`clients/python/src/contextd` (the installable src layout)."""
import os as _os

__path__ = [_os.path.join(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))), "src", "contextd")]
with open(_os.path.join(__path__[0], "__init__.py")) as _f:
    exec(compile(_f.read(), _f.name, "exec"))
