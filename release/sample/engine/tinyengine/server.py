"""A toy OpenAI-style server entry point."""

import sys


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    print("tinyengine serving", " ".join(args))
    return 0
