"""The command floor: one function per command, a typed request in, a typed outcome out.

Between ``cli`` (which parses and renders) and the floors that do the work (``flows``,
``images``, ``sample``). Each command is declared once in :mod:`release.commands.registry`
(its options, its one-sentence summary, where its function lives); the ``release``
console script and the invoke namespace ``inv release.*`` are both made from those
declarations. A command's function takes its request (a frozen dataclass whose fields
are the options) and the :class:`~release.commands.outcome.Run` it runs in, and returns
an outcome that says itself as text lines and as a JSON document; it prints nothing
itself but through ``run.say`` (progress, while it works).
"""
