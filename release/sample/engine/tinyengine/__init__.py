"""tinyengine: a toy engine for release rehearsals."""

try:
    from tinyengine._version import __version__
except ImportError:  # a source checkout, not an image
    __version__ = "0.0.0.dev0"
