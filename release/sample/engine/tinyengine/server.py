"""A toy OpenAI-style server entry point."""

import sys


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if "--help" in args or "-h" in args:
        print("usage: python -m tinyengine.server [--port PORT] [--help]")
        return 0
    print("tinyengine serving", " ".join(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
