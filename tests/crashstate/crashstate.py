#!/usr/bin/env python3
"""Crash-state checker: records the file-system calls of an operation under strace, builds
every on-disk state a power cut at each point may leave on ext4 (data=ordered, delayed
allocation, auto_da_alloc), and checks each state through the library (driver.c).

    crashstate.py --driver PATH --scratch DIR [SCENARIO...]

The model (docs/RELIABILITY.md, "Power cuts"): file data not made durable by fsync,
fdatasync or syncfs may be lost (the file keeps its last durable contents: empty for a new
file); a rename over an existing file makes the renamed file's data durable with it
(auto_da_alloc); namespace operations (create, rename, link, unlink, mkdir, rmdir) reach
the journal in program order, so a crash keeps a prefix of them, which holds at least
every operation up to the last one whose directory was fsynced (or up to a syncfs).
"""

import argparse
import hashlib
import itertools
import os
import re
import shutil
import subprocess
import sys

TRACED = (
    "open,openat,openat2,creat,write,pwrite64,writev,pwritev,pwritev2,lseek,ftruncate,truncate,"
    "fallocate,fsync,fdatasync,syncfs,sync,sync_file_range,rename,renameat,renameat2,mkdir,"
    "mkdirat,unlink,unlinkat,rmdir,link,linkat,symlink,symlinkat,close,dup,dup2,dup3,fcntl,"
    "read,readv,copy_file_range,sendfile,splice"
)

# Calls that change the namespace.
NAMESPACE = {
    "open",
    "openat",
    "openat2",
    "creat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "unlink",
    "unlinkat",
    "rmdir",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
}

# Known-good states of each scenario, item by item ("-": absent or fill value), and how a
# state is judged: `atomic` (every item from one state), `damage` (an item changed since
# the last durable state may read as an error: what the level's documentation allows).
FS_STATES = [
    {"attr": 0, "c0": 0, "c1": 0, "c2": 0, "c3": "-"},
    {"attr": 0, "c0": 1, "c1": 1, "c2": 1, "c3": 1},
    {"attr": 0, "c0": 2, "c1": 2, "c2": 1, "c3": 1},
    {"attr": 3, "c0": 2, "c1": 2, "c2": 1, "c3": 1},
    {"attr": 3, "c0": 2, "c1": 2, "c2": 1, "c3": 1, "n.attr": 4, "n.c0": 4, "n.c1": 4},
]
FS_STEPS = [
    "setup",
    "write gen 1 to chunks 0-3",
    "write gen 2 to chunks 0-1",
    "set attribute gen 3",
    "create array g/n and write gen 4",
]
SCENARIOS = {
    # NONE: after a power loss a key holds its old value, is missing if new, or (some
    # filesystems) holds an empty or truncated file: never another value, never a mix.
    "fs-none": {"states": FS_STATES, "atomic": False, "damage": True, "steps": FS_STEPS},
    # FLUSH: everything before the last flush holds; later writes as under NONE.
    "fs-flush": {"states": FS_STATES, "atomic": False, "damage": True, "steps": FS_STEPS},
    # EACH_WRITE: every write that returned holds; the one in flight leaves old or new.
    "fs-each-write": {"states": FS_STATES, "atomic": False, "damage": False, "steps": FS_STEPS},
    # The control: writes at NONE claimed durable as under EACH_WRITE. The checker must
    # find states that break the claim, or it proves nothing.
    "control": {
        "states": FS_STATES,
        "atomic": False,
        "damage": False,
        "steps": FS_STEPS,
        "control": True,
    },
    # Appends (FLUSH level): the flushed steps hold, exactly; later steps as under NONE.
    "append": {
        "states": [
            dict([("steps", k)] + [(f"s{t}", 0) for t in range(1, k + 1)]) for k in range(11)
        ],
        "atomic": False,
        "damage": True,
        "steps": ["setup"] + [f"append step {t}" for t in range(1, 11)],
    },
    # Zip close: the old archive or the new one, whole.
    "zip": {
        "states": [{"attr": g, "c0": g, "c1": g} for g in (0, 1)],
        "atomic": True,
        "damage": False,
        "steps": ["setup", "write and close the zip at gen 1"],
    },
    # Zip append: the archive with or without the new array, whole.
    "zip-append": {
        "states": [
            {"attr": 0, "c0": 0, "c1": 0},
            {"attr": 0, "c0": 0, "c1": 0, "b.attr": 1, "b.c0": 1, "b.c1": 1},
        ],
        "atomic": True,
        "damage": False,
        "steps": ["setup", "add array b at gen 1 and close"],
    },
    # Icechunk: each commit, tag and branch holds once its call returned; before, the
    # previous state, never an error.
    "icechunk": {
        "states": [
            {"main": 0, "tag": "-", "branch": "-"},
            {"main": 1, "tag": "-", "branch": "-"},
            {"main": 1, "tag": 1, "branch": "-"},
            {"main": 2, "tag": 1, "branch": "-"},
            {"main": 2, "tag": 1, "branch": 2},
        ],
        "atomic": False,
        "damage": False,
        "steps": ["setup", "commit gen 1", "tag t1", "commit gen 2", "branch b2"],
    },
}
# Files whose data may be lost: every combination is tried up to this many at a crash point.
SUBSETS = 4
# Where each scenario's target lives inside the recorded directory.
TARGETS = {"zip": "data.zip", "zip-append": "data.zip"}


class Unsupported(Exception):
    """A call the model cannot replay: the run fails rather than guess."""


class NotYet(Unsupported):
    """A call naming a file that another thread's call, still in flight in the recording,
    creates: strace may print that call's return after this one's."""


def unhex(s):
    """strace -xx string or <annotation> contents to bytes."""
    return bytes.fromhex(s.replace("\\x", "")) if s else b""


def split_args(s):
    args, cur, depth, quoted, i = [], [], 0, False, 0
    while i < len(s):
        c = s[i]
        if quoted:
            if c == "\\":
                cur.append(s[i : i + 2])
                i += 2
                continue
            if c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    if cur:
        args.append("".join(cur).strip())
    return args


def string_arg(a):
    m = re.fullmatch(r'"((?:\\x[0-9a-f]{2})*)"(\.\.\.)?', a)
    if not m or m.group(2):
        raise Unsupported(f"cannot read string argument {a[:80]}")
    return unhex(m.group(1))


def fd_arg(a):
    """'3<\\x2f...>' or 'AT_FDCWD<...>' to (fd or 'AT_FDCWD', path or None)."""
    m = re.fullmatch(r"(-?\d+|AT_FDCWD)(?:<((?:\\x[0-9a-f]{2})*)>)?", a)
    if not m:
        return None, None
    fd = m.group(1) if m.group(1) == "AT_FDCWD" else int(m.group(1))
    return fd, (unhex(m.group(2)).decode("utf-8", "surrogateescape") if m.group(2) else None)


def iov_bytes(a):
    return b"".join(
        string_arg(x) for x in re.findall(r'iov_base=("(?:\\x[0-9a-f]{2})*"(?:\.\.\.)?)', a)
    )


def parse_trace(path):
    """Yields (name, args, ret, start, end) in completion order: ret as text, start and end
    the trace lines where the call began and returned (they differ for calls that other
    threads' calls interrupted)."""
    pending = {}
    line_re = re.compile(r"^(\d+) +(.*)$")
    call_re = re.compile(r"^(\w+)\((.*)\) += (.*)$", re.S)
    with open(path, encoding="latin-1") as f:
        for lineno, line in enumerate(f):
            line = line.rstrip("\n")
            m = line_re.match(line)
            if not m:
                continue
            pid, rest = m.group(1), m.group(2)
            if rest.endswith("<unfinished ...>"):
                pending[pid] = (rest[: -len("<unfinished ...>")].rstrip(), lineno)
                continue
            start = lineno
            r = re.match(r"^<\.\.\. \w+ resumed>(.*)$", rest)
            if r:
                head, start = pending.pop(pid, ("", lineno))
                rest = head + r.group(1)
            if rest.startswith("+++") or rest.startswith("---"):
                continue
            c = call_re.match(rest)
            if not c:
                if "(" in rest and "?" in rest:
                    continue  # a call cut short by the process's end
                raise Unsupported(f"cannot parse trace line: {line[:120]}")
            yield c.group(1), split_args(c.group(2)), c.group(3), start, lineno


class Recording:
    """The recorded operation as events over inodes and directories, and the snapshot."""

    def __init__(self, root, cwd):
        self.root = os.path.realpath(root)
        self.cwd = os.path.realpath(cwd)
        self.events = []  # dicts with "kind" and what it needs
        self.ns = {}  # live namespace: relative path -> ("d", id) | ("f", inode) | ("l", target)
        self.base = {}  # inode -> contents at the snapshot
        self.next_id = 0
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel = os.path.relpath(dirpath, self.root)
            rel = "" if rel == "." else rel
            self.ns[rel] = ("d", self.new_id())
            for name in dirnames + filenames:
                p = os.path.join(dirpath, name)
                r = os.path.join(rel, name) if rel else name
                if os.path.islink(p):
                    self.ns[r] = ("l", os.readlink(p))
                elif os.path.isfile(p):
                    ino = self.new_id()
                    with open(p, "rb") as f:
                        self.base[ino] = f.read()
                    self.ns[r] = ("f", ino)
            dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
        self.snapshot = dict(self.ns)
        self.fds = {}  # fd -> {"dir": id} | {"inode", "pos", "append"} (shared on dup)
        self.opened = {}  # fd -> the trace line where it got its current file
        self.span = (0, 0)  # trace lines where the call being added began and returned

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def rel(self, path):
        """Relative path under the root, or None outside it."""
        path = os.path.normpath(path)
        if path == self.root:
            return ""
        if path.startswith(self.root + "/"):
            return path[len(self.root) + 1 :]
        return None

    def resolve(self, dirfd_text, name):
        name = name.decode("utf-8", "surrogateescape")
        if name.startswith("/"):
            return self.rel(name)
        fd, base = fd_arg(dirfd_text) if dirfd_text else ("AT_FDCWD", self.cwd)
        if base is None:
            base = self.cwd if fd == "AT_FDCWD" else None
        if base is None:
            raise Unsupported(f"relative path {name!r} against an unknown directory")
        return self.rel(os.path.join(base, name))

    def parent_dir(self, rel):
        parent = os.path.dirname(rel)
        entry = self.ns.get(parent)
        if entry is None or entry[0] != "d":
            raise NotYet(f"{rel}: parent directory not known")
        return entry[1]

    def meta(self, op, **kw):
        self.events.append(dict(kind="meta", op=op, **kw))
        apply_meta(self.ns, self.events[-1])

    def data(self, inode, **kw):
        self.events.append(dict(kind="data", inode=inode, **kw))

    def file_fd(self, a):
        fd, _ = fd_arg(a)
        entry = self.fds.get(fd)
        return entry if entry and "inode" in entry else None

    def add(self, name, args, ret):
        if ret.startswith("-1 ") or ret.startswith("?"):
            return
        if name == "write" and args and args[1].startswith('"\\x40\\x40\\x63\\x72'):
            text = string_arg(args[1]).decode()
            m = re.fullmatch(r"@@crashstate (begin|durable) (\d+)\n", text)
            if m:
                self.events.append(dict(kind="mark", what=m.group(1), k=int(m.group(2))))
                return
        retfd, retpath = fd_arg(ret.split(" ")[0]) if ret else (None, None)
        if name in ("open", "openat", "openat2", "creat"):
            if name in ("openat", "openat2"):
                flags = args[2]
            elif name == "open":
                flags = args[1]
            else:
                flags = "O_CREAT|O_WRONLY|O_TRUNC"
            self.fds.pop(retfd, None)
            rel = self.rel(retpath) if retpath else None
            if rel is None:
                return
            entry = self.ns.get(rel)
            if entry is None:
                if "O_CREAT" not in flags:
                    raise NotYet(f"open of {rel}, unknown to the model")
                ino = self.new_id()
                self.meta("create", path=rel, inode=ino, dirs={self.parent_dir(rel)})
                entry = self.ns[rel]
            if entry[0] == "d":
                self.fds[retfd] = {"dir": entry[1]}
                self.opened[retfd] = self.span[1]
                return
            if entry[0] != "f":
                raise Unsupported(f"open of {rel}: not a file")
            self.fds[retfd] = {"inode": entry[1], "pos": 0, "append": "O_APPEND" in flags}
            self.opened[retfd] = self.span[1]
            if "O_TRUNC" in flags:
                self.data(entry[1], op="truncate", size=0)
        elif name == "close":
            fd, _ = fd_arg(args[0])
            # A close that began before the current file got this number (another thread's
            # open, printed first) closed the previous file of that number.
            if fd in self.fds and self.opened[fd] < self.span[0]:
                del self.fds[fd]
                self.events.append(dict(kind="close"))
        elif name in ("dup", "dup2", "dup3", "fcntl"):
            if name == "fcntl" and "F_DUPFD" not in args[1]:
                return
            fd, _ = fd_arg(args[0])
            self.fds.pop(retfd, None)
            if fd in self.fds:
                self.fds[retfd] = self.fds[fd]
                self.opened[retfd] = self.span[1]
        elif name in ("write", "writev", "pwrite64", "pwritev", "pwritev2"):
            f = self.file_fd(args[0])
            if f is None:
                return
            n = int(ret.split()[0])
            raw = string_arg(args[1]) if name in ("write", "pwrite64") else iov_bytes(args[1])
            raw = raw[:n]
            if len(raw) != n:
                raise Unsupported(f"{name}: {n} bytes written, {len(raw)} recorded")
            if name.startswith("pwrite"):
                self.data(f["inode"], op="write", offset=int(args[3]), bytes=raw)
            elif f["append"]:
                self.data(f["inode"], op="append", bytes=raw)
            else:
                self.data(f["inode"], op="write", offset=f["pos"], bytes=raw)
                f["pos"] += n
        elif name == "lseek":
            f = self.file_fd(args[0])
            if f is not None:
                f["pos"] = int(ret.split()[0])
        elif name == "ftruncate":
            f = self.file_fd(args[0])
            if f is not None:
                self.data(f["inode"], op="truncate", size=int(args[1]))
        elif name == "truncate":
            rel = self.resolve(None, string_arg(args[0]))
            if rel is not None:
                self.data(self.ns[rel][1], op="truncate", size=int(args[1]))
        elif name == "fallocate":
            f = self.file_fd(args[0])
            if f is not None:
                if args[1] not in ("0", "FALLOC_FL_KEEP_SIZE"):
                    raise Unsupported(f"fallocate mode {args[1]}")
                if args[1] == "0":
                    self.data(f["inode"], op="extend", size=int(args[2]) + int(args[3]))
        elif name in ("fsync", "fdatasync"):
            fd, _ = fd_arg(args[0])
            entry = self.fds.get(fd)
            if entry is None:
                return
            if "dir" in entry:
                self.events.append(dict(kind="dirsync", dir=entry["dir"]))
            else:
                self.events.append(dict(kind="filesync", inode=entry["inode"]))
        elif name in ("syncfs", "sync"):
            self.events.append(dict(kind="syncfs"))
        elif name == "sync_file_range":
            # Starts write-back of data only: no durability promised (man sync_file_range).
            if self.file_fd(args[0]) is not None:
                self.events.append(dict(kind="close"))
        elif name in ("rename", "renameat", "renameat2"):
            if name == "rename":
                old, new = self.resolve(None, string_arg(args[0])), self.resolve(
                    None, string_arg(args[1])
                )
            else:
                old = self.resolve(args[0], string_arg(args[1]))
                new = self.resolve(args[2], string_arg(args[3]))
                if name == "renameat2" and "RENAME_EXCHANGE" in args[4]:
                    raise Unsupported("renameat2 RENAME_EXCHANGE")
            if old is None and new is None:
                return
            if old is None or new is None:
                raise Unsupported(f"rename across the recorded directory: {old} -> {new}")
            src, dst = self.ns.get(old), self.ns.get(new)
            if src is None:
                raise NotYet(f"rename of {old}, unknown to the model")
            over = src[0] == "f" and dst is not None and dst[0] == "f"
            self.meta(
                "rename",
                old=old,
                new=new,
                dirs={self.parent_dir(new)},
                # auto_da_alloc: the renamed file's data goes out with a rename over a file.
                forces=src[1] if over else None,
            )
        elif name in ("mkdir", "mkdirat"):
            rel = self.resolve(
                args[0] if name == "mkdirat" else None,
                string_arg(args[1 if name == "mkdirat" else 0]),
            )
            if rel is not None:
                self.meta("mkdir", path=rel, dir=self.new_id(), dirs={self.parent_dir(rel)})
        elif name in ("unlink", "unlinkat", "rmdir"):
            if name == "unlinkat":
                rel = self.resolve(args[0], string_arg(args[1]))
            else:
                rel = self.resolve(None, string_arg(args[0]))
            if rel is not None:
                if rel not in self.ns:
                    raise NotYet(f"unlink of {rel}, unknown to the model")
                self.meta("unlink", path=rel, dirs={self.parent_dir(rel)})
        elif name in ("link", "linkat"):
            if name == "link":
                old, new = self.resolve(None, string_arg(args[0])), self.resolve(
                    None, string_arg(args[1])
                )
            else:
                old = self.resolve(args[0], string_arg(args[1]))
                new = self.resolve(args[2], string_arg(args[3]))
            if old is None and new is None:
                return
            if old is not None and old not in self.ns:
                raise NotYet(f"link of {old}, unknown to the model")
            if old is None or new is None or self.ns[old][0] != "f":
                raise Unsupported(f"link {old} -> {new}")
            self.meta("link", path=new, inode=self.ns[old][1], dirs={self.parent_dir(new)})
        elif name in ("symlink", "symlinkat"):
            target = string_arg(args[0]).decode("utf-8", "surrogateescape")
            if name == "symlink":
                rel = self.resolve(None, string_arg(args[1]))
            else:
                rel = self.resolve(args[1], string_arg(args[2]))
            if rel is not None:
                self.meta("symlink", path=rel, target=target, dirs={self.parent_dir(rel)})
        elif name in ("read", "readv"):
            f = self.file_fd(args[0])
            if f is not None:
                f["pos"] += int(ret.split()[0])
        elif name == "copy_file_range":
            src, dst = self.file_fd(args[0]), self.file_fd(args[2])
            n = int(ret.split()[0])
            if dst is None:
                if src is not None:
                    src["pos"] += n
                return
            if src is None or args[1] != "NULL" or args[3] != "NULL" or dst["append"]:
                raise Unsupported("copy_file_range into the recorded directory from elsewhere")
            data = bytearray(self.base.get(src["inode"], b""))
            for e in self.events:
                if e["kind"] == "data" and e["inode"] == src["inode"]:
                    apply_data(data, e)
            raw = bytes(data[src["pos"] : src["pos"] + n])
            src["pos"] += n
            self.data(dst["inode"], op="write", offset=dst["pos"], bytes=raw)
            dst["pos"] += n
        elif name in ("sendfile", "splice"):
            for a in args:
                fd, path = fd_arg(a)
                if path is not None and self.rel(path) is not None:
                    raise Unsupported(f"{name} in the recorded directory")
        else:
            raise Unsupported(f"call {name} not modelled")


def apply_data(data, e):
    """Applies one data event to a file's bytes (a bytearray)."""
    if e["op"] == "truncate":
        del data[e["size"] :]
        data.extend(b"\0" * (e["size"] - len(data)))
    elif e["op"] == "extend":
        data.extend(b"\0" * max(0, e["size"] - len(data)))
    else:
        off = len(data) if e["op"] == "append" else e["offset"]
        if off > len(data):
            data.extend(b"\0" * (off - len(data)))
        data[off : off + len(e["bytes"])] = e["bytes"]


def apply_meta(ns, e):
    op = e["op"]
    if op == "create":
        ns[e["path"]] = ("f", e["inode"])
    elif op == "mkdir":
        ns[e["path"]] = ("d", e["dir"])
    elif op == "link":
        ns[e["path"]] = ("f", e["inode"])
    elif op == "symlink":
        ns[e["path"]] = ("l", e["target"])
    elif op == "unlink":
        ns.pop(e["path"], None)
    elif op == "rename":
        old, new = e["old"], e["new"]
        moved = {p: v for p, v in ns.items() if p == old or p.startswith(old + "/")}
        for p in [p for p in ns if p == new or p.startswith(new + "/")]:
            del ns[p]
        for p, v in moved.items():
            del ns[p]
            ns[new + p[len(old) :]] = v


class Model:
    """The states a crash after each event may leave."""

    def __init__(self, rec):
        self.rec = rec
        self.events = rec.events
        self.cache = {}

    def contents(self, inode, upto):
        """The inode's bytes after the data events before index `upto`."""
        key = (inode, upto)
        if key in self.cache:
            return self.cache[key]
        data = bytearray(self.rec.base.get(inode, b""))
        for e in self.events[:upto]:
            if e["kind"] == "data" and e["inode"] == inode:
                apply_data(data, e)
        self.cache[key] = bytes(data)
        return self.cache[key]

    def data_indices(self, inode, lo, hi):
        return [
            i
            for i in range(lo, hi)
            if self.events[i]["kind"] == "data" and self.events[i]["inode"] == inode
        ]

    def crash_states(self):
        """Yields (point, prefix, choices, their files, state) for each crash point and choice."""
        ev = self.events
        meta_idx = [i for i, e in enumerate(ev) if e["kind"] == "meta"]
        # A sync covers what returned before it began (calls of other threads still running
        # when it began may be missed): the events before the first one that had not ended.
        covers = {
            k: next((i for i, x in enumerate(ev) if x["end"] >= e["start"]), len(ev))
            for k, e in enumerate(ev)
            if "sync" in e["kind"]
        }
        # The event from which each namespace operation is durable: a later fsync of its
        # directory, or a syncfs.
        durable_at = {}
        for i in meta_idx:
            durable_at[i] = next(
                (
                    k
                    for k in covers
                    if covers[k] > i
                    and (
                        ev[k]["kind"] == "syncfs"
                        or (ev[k]["kind"] == "dirsync" and ev[k]["dir"] in ev[i]["dirs"])
                    )
                ),
                len(ev) + 1,
            )
        for p in range(len(ev) + 1):
            metas = [i for i in meta_idx if i < p]
            # Metadata reaches the journal in order: everything before a durable one is too.
            durable = max((j + 1 for j, i in enumerate(metas) if durable_at[i] < p), default=0)
            # Per inode (and "all" for syncfs): the events whose data a sync made durable.
            last_sync = {}
            for k in range(p):
                if ev[k]["kind"] == "filesync":
                    last_sync[ev[k]["inode"]] = max(last_sync.get(ev[k]["inode"], 0), covers[k])
                elif ev[k]["kind"] == "syncfs":
                    last_sync["all"] = max(last_sync.get("all", 0), covers[k])
            for m in range(durable, len(metas) + 1):
                ns = dict(self.rec.snapshot)
                forced = {}
                for i in metas[:m]:
                    apply_meta(ns, ev[i])
                    if ev[i].get("forces") is not None:
                        forced[ev[i]["forces"]] = i
                files = {}
                for path, entry in ns.items():
                    if entry[0] != "f":
                        continue
                    ino = entry[1]
                    if ino in files:
                        continue
                    d = max(last_sync.get(ino, 0), last_sync.get("all", 0), forced.get(ino, -1) + 1)
                    cur = self.contents(ino, p)
                    dur = self.contents(ino, d)
                    opts = {"all": cur}
                    if dur != cur:
                        opts["lost"] = dur
                        pending = self.data_indices(ino, d, p)
                        if len(pending) > 1:
                            opts["half"] = self.contents(ino, pending[len(pending) // 2])
                    files[ino] = opts
                dirty = sorted(i for i, o in files.items() if len(o) > 1)
                # Which files lose their data: every subset of up to SUBSETS files, beyond
                # that all, none, each one alone and all but each one; and each file half
                # written alone.
                if len(dirty) <= SUBSETS:
                    choices = [
                        {i: "lost" for i in c}
                        for n in range(len(dirty) + 1)
                        for c in itertools.combinations(dirty, n)
                    ]
                else:
                    choices = [{}, {i: "lost" for i in dirty}]
                    for i in dirty:
                        choices.append({i: "lost"})
                        choices.append({j: "lost" for j in dirty if j != i})
                choices += [{i: "half"} for i in dirty if "half" in files[i]]
                for choice in choices:
                    detail = {
                        i: (
                            sorted(q for q, v in ns.items() if v == ("f", i)),
                            len(files[i][how]),
                            len(files[i]["all"]),
                        )
                        for i, how in choice.items()
                    }
                    state = {}
                    for path, entry in ns.items():
                        if entry[0] == "f":
                            state[path] = ("f", files[entry[1]][choice.get(entry[1], "all")])
                        else:
                            state[path] = (entry[0], entry[1] if entry[0] == "l" else None)
                    yield p, (m, len(metas), durable), choice, detail, state


def describe(ev, p, prefix, detail, inode_paths):
    m, total, durable = prefix
    last = event_text(ev[p - 1], inode_paths) if p else "before the operation"
    lines = [f"  crash after event {p} of {len(ev)}: {last}"]
    metas = [e for e in ev[:p] if e["kind"] == "meta"]
    lines.append(f"  namespace operations persisted: {m} of {total} ({durable} were durable)")
    for e in metas[m:]:
        lines.append(f"    not persisted: {event_text(e, inode_paths)}")
    for paths, size, full in detail.values():
        lines.append(
            f"    file data not persisted: {', '.join(paths)} holds {size} of {full} bytes"
        )
    return "\n".join(lines)


def event_text(e, inode_paths):
    k = e["kind"]
    if k == "meta":
        if e["op"] == "rename":
            return f"rename {e['old']} -> {e['new']}"
        return f"{e['op']} {e.get('path')}"
    if k == "data":
        return f"{e['op']} {inode_paths.get(e['inode'], e['inode'])}"
    if k == "filesync":
        return f"fsync {inode_paths.get(e['inode'], e['inode'])}"
    if k == "dirsync":
        return f"fsync of the directory {inode_paths.get(e['dir'], e['dir'])}"
    if k == "mark":
        return f"step {e['k']} {'begins' if e['what'] == 'begin' else 'returned'}"
    return k


def disk_state(root):
    """A directory tree as a state: relative path -> (kind, contents or link target)."""
    state = {"": ("d", None)}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            r = name if rel == "." else os.path.join(rel, name)
            if os.path.islink(p):
                state[r] = ("l", os.readlink(p))
            elif os.path.isdir(p):
                state[r] = ("d", None)
            else:
                with open(p, "rb") as f:
                    state[r] = ("f", f.read())
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return state


def materialize(state, where):
    os.makedirs(where)
    for path in sorted(state):
        kind, value = state[path]
        full = os.path.join(where, path) if path else where
        if kind == "d":
            os.makedirs(full, exist_ok=True)
        elif kind == "l":
            os.symlink(value, full)
        else:
            with open(full, "wb") as f:
                f.write(value)


def state_key(state):
    h = hashlib.sha256()
    for path in sorted(state):
        kind, value = state[path]
        h.update(f"{path}\0{kind}\0".encode())
        if kind == "f":
            h.update(hashlib.sha256(value).digest())
        elif kind == "l":
            h.update(value.encode())
    return h.hexdigest()


def judge(spec, obs, d, s):
    """None when `obs` is allowed between durable state d and started state s, else why."""
    states = spec["states"]
    window = states[d : s + 1]
    items = set().union(*(st.keys() for st in states))
    extra = set(obs) - items
    if extra:
        return f"reads {', '.join(f'{k}={obs[k]}' for k in sorted(extra))}"
    got = {k: obs.get(k, "-") for k in items}
    if spec["atomic"]:
        if any(all(str(st.get(k, "-")) == got[k] for k in items) for st in window):
            return None
        return "not one whole known state"
    bad = []
    for k in sorted(items):
        allowed = {str(st.get(k, "-")) for st in window}
        changed = len({str(st.get(k, "-")) for st in window}) > 1
        if got[k] in allowed or (got[k] == "E" and spec["damage"] and changed):
            continue
        bad.append(f"{k}={got[k]} (allowed: {', '.join(sorted(allowed))})")
    return "; ".join(bad) or None


def run_scenario(name, driver, scratch):
    spec = SCENARIOS[name]
    base = os.path.join(scratch, name)
    root = os.path.join(base, "rec")
    os.makedirs(root)
    target = os.path.join(root, TARGETS.get(name, "store"))
    env = dict(os.environ)
    subprocess.run([driver, name, "setup", target], check=True, env=env, cwd=root)
    rec = Recording(root, root)
    trace = os.path.join(base, "trace")
    strace = ["strace", "-f", "-y", "-xx", "-v", "-qq", "-s", "16777216", "-e", "signal=none"]
    out = subprocess.run(
        strace + ["-e", f"trace={TRACED}", "-o", trace, driver, name, "run", target],
        env=env,
        cwd=root,
        stderr=subprocess.PIPE,
        text=True,
    )
    if out.returncode != 0:
        said = [l for l in out.stderr.splitlines() if not l.startswith("@@crashstate")]
        raise Unsupported(f"the recorded run failed: {' '.join(said)[-400:]}")
    calls = list(parse_trace(trace))
    i = 0
    while i < len(calls):
        call, args, ret, start, end = calls[i]
        first = len(rec.events)
        try:
            rec.span = (start, end)
            rec.add(call, args, ret)
        except NotYet:
            # Replay first the call of another thread that was in flight meanwhile and
            # changes the namespace (it returned first, whatever strace printed first).
            later = next(
                (
                    j
                    for j in range(i + 1, len(calls))
                    if calls[j][3] < end and calls[j][0] in NAMESPACE
                ),
                None,
            )
            if later is None:
                raise
            calls.insert(i, calls.pop(later))
            continue
        for e in rec.events[first:]:
            e["start"], e["end"] = start, end
        i += 1
    ev = rec.events
    if not any(e["kind"] == "mark" for e in ev):
        raise Unsupported("no step markers recorded")
    # The recording must explain the directory as the run left it: a call that wrote
    # without being recorded would make every state wrong.
    model = Model(rec)
    final = dict(rec.snapshot)
    for e in ev:
        if e["kind"] == "meta":
            apply_meta(final, e)
    final = {
        path: (
            ("f", model.contents(v[1], len(ev)))
            if v[0] == "f"
            else (v[0], v[1] if v[0] == "l" else None)
        )
        for path, v in final.items()
    }
    actual = disk_state(root)
    if state_key(final) != state_key(actual):
        differ = sorted(p for p in set(final) | set(actual) if final.get(p) != actual.get(p))
        raise Unsupported(
            f"the recording does not explain the directory after the run: {differ[:5]}"
        )
    inode_paths = {}  # file or directory id -> its first path, for messages
    ns = dict(rec.snapshot)
    for e in [None] + ev:
        if e and e["kind"] == "meta":
            apply_meta(ns, e)
        for path, entry in ns.items():
            if entry[0] in "fd":
                inode_paths.setdefault(entry[1], path or ".")
    distinct = {}  # key -> index
    instances = []  # (p, prefix, choice, key, state or None)
    states_dir = os.path.join(base, "states")
    points = set()
    for p, prefix, choice, detail, state in model.crash_states():
        key = state_key(state)
        points.add(p)
        if key not in distinct:
            distinct[key] = len(distinct)
            materialize(state, os.path.join(states_dir, str(distinct[key])))
        instances.append((p, prefix, detail, key))
    rel_target = os.path.relpath(target, root)
    paths = [os.path.join(states_dir, str(i), rel_target) for i in range(len(distinct))]
    observed = {}
    batches = [list(range(i, min(i + 200, len(paths)))) for i in range(0, len(paths), 200)]
    while batches:
        batch = batches.pop()
        cmd = [driver, name, "check"] + [paths[i] for i in batch]
        try:
            # A state takes milliseconds to check: minutes mean the check hangs.
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
            verdict, said = ("died", out.stderr) if out.returncode != 0 else (None, "")
        except subprocess.TimeoutExpired:
            verdict, said = "hung", "no answer within 120 s"
        if verdict:
            if len(batch) > 1:
                batches += [[i] for i in batch]  # find the state that kills the check
            else:
                why = said.strip().splitlines()[-1:] or [f"exit status {out.returncode}"]
                observed[batch[0]] = ({"check": verdict}, why[0][:300])
            continue
        for line in out.stdout.splitlines():
            head, _, errors = line.partition(" |")
            fields = head.split()
            obs = dict(f.split("=", 1) for f in fields[1:])
            if "open" in obs:
                obs = {k: "E" for st in spec["states"] for k in st}
            observed[batch[int(fields[0])]] = (obs, errors.strip())
    if len(observed) != len(paths):
        raise Unsupported("driver check answered for fewer states than asked")
    failures = []
    for p, prefix, detail, key in instances:
        d = s = 0
        for e in ev[:p]:
            if e["kind"] == "mark":
                if e["what"] == "begin":
                    s = e["k"]
                else:
                    d = e["k"]
        obs, errors = observed[distinct[key]]
        why = judge(spec, obs, d, s)
        if why:
            failures.append((p, prefix, detail, key, d, s, obs, errors, why))
    verdict = "breaking the false claim (expected)" if spec.get("control") else "failing"
    print(
        f"{name}: {len(ev)} events, {len(points)} crash points, "
        f"{len(instances)} crash states checked, {len(distinct)} distinct, {len(failures)} {verdict}"
    )
    if spec.get("control"):
        return len(instances), len(distinct), len(failures)
    shown = set()
    for p, prefix, detail, key, d, s, obs, errors, why in failures:
        if (key, why) in shown or len(shown) >= 5:
            continue
        shown.add((key, why))
        steps = spec["steps"]
        print(f"FAIL {name}: step {s} ({steps[s]}) begun, step {d} ({steps[d]}) returned: {why}")
        print(
            f"  states/{distinct[key]} reads: {' '.join(f'{k}={v}' for k, v in sorted(obs.items()))}"
            + (f" ({errors})" if errors else "")
        )
        print(describe(ev, p, prefix, detail, inode_paths))
    if failures:
        # What the failing states share, to name the cause at a glance.
        by_step, last_op, lost = {}, {}, {}
        metas = [i for i, e in enumerate(ev) if e["kind"] == "meta"]
        for p, prefix, detail, key, d, s, obs, errors, why in failures:
            by_step[s] = by_step.get(s, 0) + 1
            m = prefix[0]
            op = event_text(ev[metas[m - 1]], inode_paths) if m else "none"
            last_op[op] = last_op.get(op, 0) + 1
            for paths, _, _ in detail.values():
                for where in {os.path.dirname(q) or "." for q in paths}:
                    lost[where] = lost.get(where, 0) + 1
        steps = spec["steps"]
        print(
            f"{name}: failing states by step: "
            + ", ".join(f"{steps[k]}: {n}" for k, n in sorted(by_step.items()))
        )
        print(
            f"{name}: last namespace operation persisted in them: "
            + ", ".join(f"{k} ({n})" for k, n in sorted(last_op.items(), key=lambda x: -x[1])[:4])
        )
        print(
            f"{name}: file data not persisted in them, by directory: "
            + (
                ", ".join(f"{k}/ ({n})" for k, n in sorted(lost.items(), key=lambda x: -x[1]))
                or "none"
            )
        )
    return len(instances), len(distinct), len(failures)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driver", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    args = ap.parse_args()
    total = distinct = 0
    failed = []
    for name in args.scenarios or list(SCENARIOS):
        if name not in SCENARIOS:
            sys.exit(f"unknown scenario {name}")
        try:
            n, dn, f = run_scenario(
                name, os.path.abspath(args.driver), os.path.abspath(args.scratch)
            )
        except (Unsupported, subprocess.CalledProcessError) as e:
            sys.exit(f"{name}: cannot check: {e}")
        total, distinct = total + n, distinct + dn
        if SCENARIOS[name].get("control"):
            if not f:
                failed.append(f"{name} (found nothing wrong in writes that were never synced)")
        elif f:
            failed.append(name)
            continue  # its recording and states stay for a look
        shutil.rmtree(os.path.join(args.scratch, name))
    print(f"{total} crash states checked, {distinct} distinct")
    if failed:
        print(f"crash states failed in: {', '.join(failed)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
