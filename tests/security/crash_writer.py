"""A document writer that stops for good half-way through a write, to be SIGKILLed there.

``python crash_writer.py HOME MARKER PATH TEXT_FILE``: writes the text of
``TEXT_FILE`` to ``PATH`` for acme/alice in the file store under ``HOME``; once the
temp file holds the whole text (synced to disk), it writes its pid to ``MARKER`` and
sleeps: the moment a crash leaves the most behind, before the rename.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

from engram import Principal
from engram.backends.files import FileDocumentStore


def main(home: Path, marker: Path, path: str, text: str) -> None:
    real_fsync = os.fsync

    def stall(fd: int) -> None:
        real_fsync(fd)
        if stat.S_ISREG(os.fstat(fd).st_mode):  # the temp file, not its folder
            partial = marker.with_name(marker.name + ".part")
            partial.write_text(str(os.getpid()), encoding="utf-8")
            partial.replace(marker)  # whole, or not there yet
            time.sleep(600)

    os.fsync = stall
    with FileDocumentStore(home=home) as store:
        store.write_text(Principal("acme", "alice"), path, text)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]).read_text("utf-8"))
