"""python -m shardpack pack|convert|verify|stat|bench ...: the same code as the shardpack command."""

import sys

from . import _shardpack


def main():
    return _shardpack.cli(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
