"""``python -m engram``: the same CLI as the ``engram`` command."""

from engram.cli import main

if __name__ == "__main__":
    main(prog_name="engram")
