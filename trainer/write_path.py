"""The trainer's one write path for files named from outside input (record ids of an import).

The Python side of the rule the studio keeps in ``src/core/base/writePath.ts`` and
``src/core/trace/format/ids.ts``: nothing is written outside the folder a person named (``--out``).

- :func:`safe_id` takes a name read from a file and returns it when it is one plain path segment, by
  the studio's id rule (``ID_PATTERN``, the same as ``ids.ts`` and the task schema's ``id``); anything
  else is ``INVALID_ID``, saying why (a slash, a leading dot, a control character, its length...).
- :func:`make_folder` and :func:`write_file` write below a root the person named (trusted as named,
  links in it included). Every component below it is walked with ``lstat``: a symbolic link must
  resolve (``realpath``) inside the root's real folder, and a link in the file's own place is never
  written through; anything else is ``PATH_OUTSIDE_WORKSPACE``. A file is written atomically: a
  temporary file beside it (created exclusively, not through a link), flushed and fsynced, then
  renamed over the target with ``os.replace``.

As on the TypeScript side, the checks run before the open: a folder swapped for a link between the
check and the write is not caught; the file's own place is.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import stat
from collections.abc import Sequence

from .errors import EXIT_RUNTIME, TrainerError

#: An id: a letter or digit, then letters, digits, ``.``, ``_``, ``:``, ``-``; at most 128 characters
#: (``ID_PATTERN`` of ``src/core/trace/format/ids.ts``). No slash and no leading dot: one path segment.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
#: The longest id.
MAX_ID_LENGTH = 128
#: How much of a refused name a message shows.
_SHOWN = 80

_ID_RULE = "use letters, digits, '.', '_', ':' or '-' (no '/'), starting with a letter or digit"
_LINK_FIX = "remove the link, or name another folder with --out"
_THROUGH_LINK = "it is a symbolic link; the trainer does not write through links"


def shown_name(name: object) -> str:
    """``name`` as one line of plain text: itself when it is a valid id, else JSON-quoted (controls and
    non-ASCII escaped) and cut at 80 characters."""
    if isinstance(name, str) and ID_PATTERN.fullmatch(name):
        return name
    text = json.dumps(name if isinstance(name, str) else repr(name))
    return text if len(text) <= _SHOWN else text[: _SHOWN - 2] + '…"'


def _id_fault(name: object) -> str | None:
    """Why ``name`` is not an id, or None."""
    if not isinstance(name, str):
        return f"it is {type(name).__name__}, not text"
    if name == "":
        return "it is empty"
    if "\0" in name:
        return "it holds a NUL"
    if "/" in name or "\\" in name:
        return "it holds a slash, so it would name a path rather than a file"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "it holds a control character"
    if name.startswith("."):
        return "it starts with a dot"
    if len(name) > MAX_ID_LENGTH:
        return f"it is {len(name)} characters long, more than {MAX_ID_LENGTH}"
    if not ID_PATTERN.fullmatch(name):
        return "it holds characters ids may not hold"
    return None


def safe_id(name: object, what: str) -> str:
    """``name`` when it is a valid id (one path segment); else ``INVALID_ID`` saying why. ``what``
    names it in the message (``record``)."""
    fault = _id_fault(name)
    if fault is not None:
        raise TrainerError("INVALID_ID", f"Invalid {what} id {shown_name(name)}: {fault}; {_ID_RULE}.")
    assert isinstance(name, str)
    return name


def _refuse(root: str, target: str, why: str, fix: str = _LINK_FIX) -> TrainerError:
    return TrainerError("PATH_OUTSIDE_WORKSPACE",
                        f"Refusing to write {_shown_path(target)}: {why}. The trainer writes only inside "
                        f"{_shown_path(root)}: {fix}.", path=target)


def _shown_path(path: str) -> str:
    """A path as one line: JSON-quoted when it holds a control or other unprintable character, cut at 300
    characters."""
    text = path if path.isprintable() else json.dumps(path)
    return text if len(text) <= 300 else text[:299] + "…"


def _within(folder: str, path: str) -> bool:
    return path == folder or os.path.commonpath([folder, path]) == folder


def _check_segment(root: str, segment: str) -> None:
    """One plain name below the root: not empty, ``.`` or ``..``, no separator, no NUL."""
    if segment in ("", ".", "..") or "/" in segment or "\\" in segment or "\0" in segment \
            or (os.altsep and os.altsep in segment):
        raise _refuse(root, os.path.join(root, segment), "it is not one plain name inside that folder",
                      "fix the name")


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _locate(root: str, segments: Sequence[str], file: bool) -> str:
    """The path to act on for ``root/segments...``, built from real paths; missing folders are made one
    by one. The root is trusted as named; below it a link must resolve inside the root's real folder,
    and with ``file`` the last segment may not be a link at all."""
    root = os.path.abspath(root)
    for segment in segments:
        _check_segment(root, segment)
    os.makedirs(root, exist_ok=True)
    real_root = os.path.realpath(root)
    at = real_root
    for i, segment in enumerate(segments):
        step = os.path.join(at, segment)
        last = i == len(segments) - 1
        status = _lstat(step)
        if status is None and file and last:
            return step
        if status is None:
            try:
                os.mkdir(step)
            except FileExistsError:
                pass
            status = os.lstat(step)
        if stat.S_ISLNK(status.st_mode):
            shown = os.path.join(root, *segments[: i + 1])
            if file and last:
                raise _refuse(root, shown, _THROUGH_LINK)
            try:
                real = os.path.realpath(step, strict=True)
            except OSError:
                raise _refuse(root, shown, f"{_shown_path(step)} is a symbolic link that leads nowhere") from None
            if not _within(real_root, real):
                raise _refuse(root, shown, f"{_shown_path(step)} is a symbolic link to {_shown_path(real)}")
            at = real
        else:
            at = step
    return at


def _os_error(path: str, e: OSError) -> TrainerError:
    return TrainerError("WRITE_FAILED", f"Cannot write {_shown_path(path)}: {e.strerror or e}.", EXIT_RUNTIME, path=path)


def make_folder(root: str, *segments: str) -> str:
    """Makes ``root/segments...`` (and what is missing above it) inside ``root``; returns its real path.
    ``PATH_OUTSIDE_WORKSPACE`` when a link below the root leads out of it, ``WRITE_FAILED`` when the
    file system refuses."""
    try:
        return _locate(root, segments, file=False)
    except OSError as e:
        raise _os_error(os.path.join(os.path.abspath(root), *segments), e) from e


def write_file(root: str, segments: Sequence[str], data: str | bytes) -> str:
    """Writes ``data`` (text as UTF-8) to ``root/segments...`` atomically, making its folders; returns the
    path written. The file lands inside ``root``'s real folder or nothing is written:
    ``PATH_OUTSIDE_WORKSPACE`` (a link leading out, a link in the file's place, a name that is not one
    plain segment), ``WRITE_FAILED`` (the file system refused: a folder in the file's place, a full
    disk)."""
    if not segments:
        raise _refuse(root, os.path.abspath(root), "it is the folder itself, not a file in it", "name a file")
    target = os.path.join(os.path.abspath(root), *segments)
    try:
        at = _locate(root, segments, file=True)
        # Built from real paths, so this holds; checked again as the rule itself, right before the write.
        if not _within(os.path.realpath(os.path.abspath(root)), os.path.realpath(os.path.dirname(at))):
            raise _refuse(root, target, "its folder is not inside that folder")
        payload = data.encode("utf-8") if isinstance(data, str) else data
        _replace_atomically(os.path.dirname(at), os.path.basename(at), payload)
    except OSError as e:
        raise _os_error(target, e) from e
    return at


def _replace_atomically(folder: str, name: str, payload: bytes) -> None:
    """A temporary file beside ``name`` (exclusive, never through a link), synced, renamed over it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(16):
        tmp = os.path.join(folder, f"{name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o644)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary name beside {name}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(folder, name))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """The rename on disk too, where the system lets a folder be synced (not on Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
