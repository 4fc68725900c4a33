"""Which files a parse reads, and how their bytes are read: the same for both engines.

`scan_inputs(paths)` turns the paths a user gives into the files to read, and says what it
decided about everything else, by name (`InputNote`). Both engines (`logs.parse` and
`spark.load`) read exactly these files, so they count the same lines and print the same notes.

What is decided, and said:

* Directories are walked; names starting with `.` or `_` are skipped (as Spark does).
* A symlinked folder is followed once: folders are known by their real path, so a link to a
  folder already read (or to one above it: a loop) is skipped, and a link to a folder outside
  the walk is read ("followed"). The walk's own folders are read first, so a file seen both
  directly and through a link is read under its own name. A file reached twice (two links, a
  path given twice) is read once.
* A dangling symlink, a FIFO, socket or device, and a file or folder that cannot be opened
  (no permission, gone) are skipped, named, with the reason.
* Compressed files: `.gz` and `.bz2` are decompressed (`open_log`). One that is damaged (cut
  short, not gzip at all, failing its checksum) is read up to the damage: its readable lines
  are kept and the note says how many, and why the rest is lost. Other compressed formats
  (`.xz`, `.zst`, `.lz4`, `.snappy`, `.deflate`, `.br`) are not read (the note says so): the
  kit reads them in neither engine, so that both give the same lines.
* The kit's own non-log files (trace.jsonl, consumer_offsets.csv, groups.csv) in a walked
  folder are left out as before (`kit_files`); named on their own they are refused.

A path the user names that does not exist raises FileNotFoundError (nothing to read is an
error, not a note).
"""

from __future__ import annotations

import bz2
import io
import os
import stat
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

__all__ = ["InputNote", "LogFile", "Inputs", "scan_inputs", "open_log", "LogStream",
           "damage_note", "display_name", "KIT_DATA_FILES", "kit_data_file", "CODECS",
           "UNREAD_COMPRESSED", "check_out_dir"]

# extension -> codec the kit decompresses (in both engines)
CODECS: dict[str, str] = {".gz": "gzip", ".bz2": "bzip2"}
# compressed formats Hadoop may or may not decompress, which the kit's Python reader cannot:
# read in neither engine
UNREAD_COMPRESSED: dict[str, str] = {".xz": "xz", ".zst": "zstd", ".lz4": "LZ4",
                                     ".snappy": "Snappy", ".deflate": "deflate",
                                     ".br": "Brotli", ".lzo": "LZO"}


@dataclass(frozen=True)
class InputNote:
    """What was decided about one path, and why: `action` is followed, skipped, not read or
    read in part."""

    path: str
    action: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}: {self.action}: {self.why}"


@dataclass(frozen=True)
class LogFile:
    """A file to read: `path` to open, `name` for the `file` column (its real path, as text),
    its size on disk and its codec (None: plain)."""

    path: Path
    name: str
    size: int
    codec: str | None = None


@dataclass
class Inputs:
    files: list[LogFile] = field(default_factory=list)
    notes: list[InputNote] = field(default_factory=list)
    kit_files: list[Path] = field(default_factory=list)


# Files the kit writes next to its logs (datasets/<run>/, the large generator) that are not
# logs: name -> (how the first line starts, what it is). Read as log lines they would come out
# wrong (trace.jsonl's `ts` is virtual milliseconds since the run's start, not epoch seconds,
# and every one of its logged events is also a line of the .log files), so a directory walk
# leaves them out, and says so.
KIT_DATA_FILES: dict[str, tuple[str, str]] = {
    "trace.jsonl": ('{"f_', "the kit's trace (virtual ms since the run's start; its logged "
                    "events are the .log files' lines)"),
    "consumer_offsets.csv": ("partition,offset,ts,", "the __consumer_offsets records as a table"),
    "groups.csv": ("group,variant,", "the large generator's table of groups"),
}


def kit_data_file(path: Path) -> str | None:
    """What `path` is when it is one of the kit's non-log dataset files, else None."""
    known = KIT_DATA_FILES.get(path.name)
    if known is None:
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(len(known[0])).decode("utf-8", "replace")
    except OSError:
        return None
    if path.name == "trace.jsonl":      # keys are sorted: f_<field>..., or "kind" first
        return known[1] if head.startswith(('{"f_', '{"kind"')) else None
    return known[1] if head == known[0] else None


def display_name(path: str | os.PathLike[str]) -> str:
    """A path as text that can be written anywhere (Parquet, JSON, Spark): bytes of the name
    that are not UTF-8 become U+FFFD."""
    raw = os.fsencode(path)
    return raw.decode("utf-8", "replace")


def _kind_of(mode: int) -> str:
    for test, what in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return what
    return "not a regular file"


class _Scan:
    def __init__(self) -> None:
        self.out = Inputs()
        self.walked: dict[str, str] = {}          # real folder -> the name it was read as
        self.read: dict[str, str] = {}            # real file -> the name it was read as
        self.links: list[tuple[Path, str]] = []   # symlinks, for after the walk

    def note(self, path: Path | str, action: str, why: str) -> None:
        self.out.notes.append(InputNote(display_name(path), action, why))

    def add_file(self, p: Path, explicit: bool) -> None:
        real = os.path.realpath(p)
        try:
            st = os.stat(p)
        except OSError as exc:
            self.note(p, "skipped", _dangling(p) if os.path.islink(p)
                      else f"cannot be read: {exc.strerror}")
            return
        if not stat.S_ISREG(st.st_mode):
            self.note(p, "skipped", f"{_kind_of(st.st_mode)}, not a file of lines")
            return
        if real in self.read:
            self.note(p, "skipped", f"the same file as {display_name(self.read[real])}, "
                      "read once")
            return
        what = kit_data_file(p)
        if what is not None:
            if explicit:
                raise ValueError(f"{p} is not a log: it is {what}. Give the run's .log files, "
                                 f"or its folder (where {p.name} is skipped)")
            self.out.kit_files.append(p)
            return
        suffix = p.suffix.lower()
        if suffix in UNREAD_COMPRESSED:
            self.note(p, "not read", f"compressed with {UNREAD_COMPRESSED[suffix]}, which the "
                      f"kit does not decompress; decompress it first (its lines are then read)")
            return
        try:
            fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            os.close(fd)
        except OSError as exc:
            self.note(p, "not read", f"cannot be opened: {exc.strerror}")
            return
        self.read[real] = str(p)
        self.out.files.append(LogFile(p, display_name(real), st.st_size, CODECS.get(suffix)))

    def walk(self, folder: Path) -> None:
        real = os.path.realpath(folder)
        self.walked[real] = str(folder)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.note(folder, "not read", f"the folder cannot be listed: {exc.strerror}")
            return
        subfolders = []
        for e in entries:
            if e.name.startswith((".", "_")):
                continue
            p = Path(e.path)
            if e.is_symlink():                   # after the walk's own files and folders
                self.links.append((p, os.path.realpath(p)))
            elif e.is_dir(follow_symlinks=False):
                subfolders.append(p)
            else:
                self.add_file(p, explicit=False)
        for sub in subfolders:
            self.walk(sub)

    def follow_links(self) -> None:
        """The symlinks met in the walk, once the walk's own files and folders are known (so a
        file or folder seen both directly and through a link is read under its own name)."""
        while self.links:
            link, real = self.links.pop(0)
            here = os.path.realpath(link.parent)
            if not os.path.exists(link):
                self.note(link, "skipped", _dangling(link))
            elif not os.path.isdir(link):
                self.add_file(link, explicit=False)
            elif real == here or here.startswith(real.rstrip(os.sep) + os.sep):
                self.note(link, "skipped", f"a symlink loop: it points to {display_name(real)}, "
                          "a folder it is inside")
            elif real in self.walked:
                self.note(link, "skipped", "a symlink to a folder already read, as "
                          f"{display_name(self.walked[real])}")
            else:
                self.note(link, "followed", f"a symlink to the folder {display_name(real)}, "
                          "read once")
                self.walk(link)


def _dangling(p: Path) -> str:
    try:
        target = os.readlink(p)
    except OSError:
        target = "?"
    return f"a dangling symlink (to {display_name(target)}, which does not exist)"


def scan_inputs(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> Inputs:
    """The files under `paths` and the notes on what was left out (see the module docstring).

    Raises FileNotFoundError naming a given path that does not exist (or is a dangling
    symlink), and ValueError for a kit data file named on its own."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    scan = _Scan()
    for p in map(Path, paths):
        if not os.path.exists(p):
            if os.path.islink(p):
                raise FileNotFoundError(f"log path {str(p)!r} is {_dangling(p)}; give a file "
                                        "or a directory of log files")
            try:
                os.stat(p)
            except PermissionError:
                raise FileNotFoundError(f"log path {str(p)!r} cannot be reached: permission "
                                        "denied on a folder above it") from None
            except OSError:
                pass
            raise FileNotFoundError(f"log path {str(p)!r} does not exist; give a file or a "
                                    "directory of log files")
        if p.is_dir():
            real = os.path.realpath(p)
            if real in scan.walked:
                scan.note(p, "skipped", f"the same folder as {display_name(scan.walked[real])}, "
                          "read once")
            else:
                scan.walk(p)
        else:
            scan.add_file(p, explicit=True)
    scan.follow_links()
    return scan.out


# -- reading ----------------------------------------------------------------------------------

class LogStream(io.RawIOBase):
    """A log file's bytes, decompressed for `.gz` and `.bz2`; at the first damage in the
    compressed data it ends (as if the file ended there) and `damage` says what was wrong.
    Everything decompressed before the damage is read."""

    _IN = 1 << 16           # compressed bytes per step
    _OUT = 1 << 22          # at most this much decompressed per step

    def __init__(self, f: LogFile) -> None:
        super().__init__()
        self.file = f
        self.damage: str | None = None
        self.bytes_out = 0
        self._raw: IO[bytes] = open(f.path, "rb")
        self._codec = f.codec
        self._buf = b""
        self._done = False
        self._dec = self._decompressor()
        self._started = False          # a member has begun (some compressed input taken)
        self._members = 0              # members read to their end
        self._pending = b""            # compressed input not yet given to the decompressor

    def _decompressor(self) -> object:
        return zlib.decompressobj(31) if self._codec == "gzip" else bz2.BZ2Decompressor()

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()

    def read(self, size: int = -1) -> bytes:
        if self._codec is None:
            data = self._raw.read(size)
            self.bytes_out += len(data)
            return data
        want = size if size is not None and size >= 0 else 1 << 62
        while len(self._buf) < want and not self._done:
            self._step()
        data, self._buf = self._buf[:want], self._buf[want:]
        self.bytes_out += len(data)
        return data

    def readinto(self, b: bytearray) -> int:          # pragma: no cover - read() is used
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)

    def _stop(self, damage: str | None) -> None:
        self.damage = damage
        self._done = True

    def _step(self) -> None:
        d = self._dec
        if self._codec == "gzip":
            data = d.unconsumed_tail or self._pending or self._raw.read(self._IN)  # type: ignore[attr-defined]
            self._pending = b""
            if self._members and not self._started:    # zero padding after a member: gzip's
                data = data.lstrip(b"\x00")            # own reader allows it too
                while not data:
                    data = self._raw.read(self._IN)
                    if not data:
                        break
                    data = data.lstrip(b"\x00")
            if not data:
                self._stop("the gzip data ends before its end marker (the file is cut short)"
                           if self._started else None)
                return
            self._started = True
            try:
                out = d.decompress(data, self._OUT)  # type: ignore[attr-defined]
            except zlib.error as exc:
                self._stop(_gzip_damage(exc, self.bytes_out + len(self._buf)))
                return
            self._buf += out
            if d.eof:                                                  # type: ignore[attr-defined]
                rest = d.unused_data                                   # type: ignore[attr-defined]
                self._dec = self._decompressor()
                self._started = False
                self._members += 1
                self._pending = rest
        else:
            if d.needs_input:                                          # type: ignore[attr-defined]
                data = self._pending or self._raw.read(self._IN)
                self._pending = b""
                if not data:
                    self._stop("the bzip2 data ends before its end marker (the file is cut "
                               "short)" if self._started else None)
                    return
            else:
                data = b""
            self._started = True
            try:
                out = d.decompress(data, self._OUT)                    # type: ignore[attr-defined]
            except (OSError, EOFError, ValueError) as exc:
                self._stop(f"the bzip2 data is damaged ({exc})" if self.bytes_out or self._buf
                           else f"not bzip2 data ({exc})")
                return
            self._buf += out
            if d.eof:                                                  # type: ignore[attr-defined]
                rest = d.unused_data                                   # type: ignore[attr-defined]
                self._dec = self._decompressor()
                self._started = False
                self._pending = rest
                if not rest:
                    more = self._raw.read(self._IN)
                    if not more:
                        self._stop(None)
                    self._pending = more


def _gzip_damage(exc: zlib.error, decoded: int) -> str:
    text = str(exc)
    if "incorrect header check" in text and decoded == 0:
        return "not gzip data (it does not start with a gzip header)"
    if "incorrect header check" in text:
        return "unreadable data after the last gzip member"
    if "data check" in text or "length check" in text:
        return "the gzip checksum does not match the data (the file is damaged)"
    return f"the gzip data is damaged ({text.split(': ', 1)[-1]})"


def open_log(f: LogFile) -> LogStream:
    """A binary stream of `f`'s lines' bytes (see LogStream). OSError when it cannot be
    opened."""
    return LogStream(f)


def damage_note(f: LogFile, damage: str, lines: int) -> InputNote:
    """The note for a compressed file read up to its damage, with how many lines were read."""
    if lines == 0:
        return InputNote(f.name, "not read", f"{damage}; no line could be read")
    return InputNote(f.name, "read in part", f"{damage}; its first {lines:,} line(s) were "
                     "read, the rest is lost")


def check_out_dir(out: str | os.PathLike[str]) -> Path:
    """`out` as a directory the parse can write to (made when missing), or ValueError saying
    what is in the way: `out` is a file, a folder above it is a file, or it cannot be written."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a directory; give a directory (it is "
                         "made when missing)")
    above = out
    while not above.exists():
        if above.parent == above:
            break
        above = above.parent
    if above.exists() and not above.is_dir():
        raise ValueError(f"--out {out}: {above} is a file, so no directory can be made below "
                         "it; give a directory path")
    if above.exists() and not os.access(above, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out}: cannot write in {above} (permission denied); give a "
                         "directory you can write to")
    return out
