"""tinyengine: a toy engine for release rehearsals."""

__version__ = "0.0.0"
