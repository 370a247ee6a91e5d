"""invoke entry point: ``inv release.status``, ``inv release.cut 0.31.0``, ... (see README)."""

from invoke import Collection

from release.cli.tasks import ns as release

ns = Collection(release)
