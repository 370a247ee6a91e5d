"""release: the release-candidate toolkit for GPU inference engines."""

__version__ = "0.1.0.dev0"
