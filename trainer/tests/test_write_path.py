"""The trainer's one write path (trainer/write_path.py): names from outside are one plain path segment
or a coded refusal, every write lands inside the named folder's real path, and a file is replaced
whole or not at all. Each case lists the scratch folder around the root before and after: nothing
outside the root may change."""
import os
import re
import stat
import tempfile
import unittest
from unittest import mock

from ..errors import TrainerError
from ..write_path import ID_PATTERN, MAX_ID_LENGTH, make_folder, safe_id, write_file

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

HOSTILE_IDS = {
    "newline": "multi_turn_base_1\n../x",
    "dot dot slash": "../x",
    "a prefix then up": "multi_turn_x/../../x",
    "absolute": "/etc/passwd",
    "backslash": "multi_turn_x\\..\\..\\x",
    "dot dot": "..",
    "leading dot": ".hidden",
    "empty": "",
    "NUL": "multi_turn_base_1\0.json",
    "one too long": "m" * (MAX_ID_LENGTH + 1),
    "very long": "m" * 100_000,
    "unicode slash": "multi_turn_x\u2215..\u2215x",
    "right-to-left override": "multi_turn_\u202egpj.x",
    "escape": "multi_turn_\x1b[31mred",
    "space": "multi turn",
}


def listing(folder):
    """Every entry under ``folder``: path, kind, and a file's content or a link's target."""
    out = {}
    for at, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = os.path.join(at, name)
            rel = os.path.relpath(p, folder)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("folder",)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", f.read())
    return out


class WritePathTest(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.scratch = scratch.name
        self.root = os.path.join(self.scratch, "out")
        self.outside = os.path.join(self.scratch, "outside")
        os.makedirs(self.root)
        os.makedirs(self.outside)
        with open(os.path.join(self.outside, "x.task.json"), "w", encoding="utf-8") as f:
            f.write("theirs")

    def outside_listing(self):
        return {k: v for k, v in listing(self.scratch).items() if not k.startswith("out" + os.sep) and k != "out"}

    def refused(self, code, call):
        with self.assertRaises(TrainerError) as e:
            call()
        self.assertEqual(e.exception.code, code, e.exception.message)
        self.assertNotIn("\n", e.exception.message)
        self.assertLess(len(e.exception.message), 1000)
        return e.exception.message

    def test_the_id_rule_is_the_studios(self):
        with open(os.path.join(REPO, "src", "core", "trace", "format", "ids.ts"), encoding="utf-8") as f:
            studio = re.search(r"export const ID_PATTERN = /\^(.*)\$/;", f.read())
        assert studio is not None
        self.assertEqual(ID_PATTERN.pattern, studio.group(1))

    def test_an_id_is_one_plain_segment_or_a_coded_refusal_saying_why(self):
        for good in ("multi_turn_base_0", "a.b:c-d_e", "m" * MAX_ID_LENGTH, "0"):
            self.assertEqual(safe_id(good, "record"), good)
        for case, name in HOSTILE_IDS.items():
            with self.subTest(case):
                message = self.refused("INVALID_ID", lambda name=name: safe_id(name, "record"))
                self.assertTrue(message.startswith("Invalid record id "), message)
        for case, name in {"slash": "a/b", "dot": ".x", "NUL": "a\0", "control": "a\nb", "long": "m" * 129}.items():
            with self.subTest(case):
                message = self.refused("INVALID_ID", lambda name=name: safe_id(name, "record"))
                why = {"slash": "slash", "dot": "starts with a dot", "NUL": "NUL", "control": "control character",
                       "long": "129 characters long"}[case]
                self.assertIn(why, message)
        for not_text in (None, 7, ["a"]):
            self.refused("INVALID_ID", lambda v=not_text: safe_id(v, "record"))

    def test_writes_land_inside_whole_with_the_usual_mode_and_no_temporary_left(self):
        path = write_file(self.root, ("tasks", "multi_turn_base_0.task.json"), "{}\n")
        self.assertEqual(path, os.path.join(os.path.realpath(self.root), "tasks", "multi_turn_base_0.task.json"))
        write_file(self.root, ("tasks", "multi_turn_base_0.task.json"), "{\"again\": 1}\n")
        self.assertEqual(listing(self.root), {"tasks": ("folder",),
                                              os.path.join("tasks", "multi_turn_base_0.task.json"):
                                                  ("file", b"{\"again\": 1}\n")})
        umask = os.umask(0)
        os.umask(umask)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o644 & ~umask)

    def test_names_that_are_not_one_segment_write_nothing_anywhere(self):
        before = self.outside_listing()
        for segments in (("..", "x.task.json"), ("tasks", "../../outside/x.task.json"), ("/etc", "passwd"),
                         ("tasks", "/abs.json"), ("tasks", "a\0b"), ("tasks", "."), ("tasks", "a\\..\\b"), ()):
            with self.subTest(segments):
                self.refused("PATH_OUTSIDE_WORKSPACE", lambda s=segments: write_file(self.root, s, "x"))
        self.refused("PATH_OUTSIDE_WORKSPACE", lambda: make_folder(self.root, "..", "escaped"))
        self.assertEqual(self.outside_listing(), before)
        self.assertEqual(listing(self.root), {})

    def test_a_link_below_the_root_that_leads_out_is_refused_and_nothing_outside_changes(self):
        os.symlink(self.outside, os.path.join(self.root, "tasks"))
        before = self.outside_listing()
        message = self.refused("PATH_OUTSIDE_WORKSPACE",
                               lambda: write_file(self.root, ("tasks", "x.task.json"), "mine"))
        self.assertIn(f"is a symbolic link to {os.path.realpath(self.outside)}", message)
        self.refused("PATH_OUTSIDE_WORKSPACE", lambda: make_folder(self.root, "tasks", "deeper"))
        self.assertEqual(self.outside_listing(), before)

    def test_a_link_in_the_files_place_is_never_written_through(self):
        os.makedirs(os.path.join(self.root, "tasks"))
        for target in (os.path.join(self.outside, "x.task.json"), os.path.join(self.root, "inside.json"),
                       os.path.join(self.outside, "nowhere")):
            link = os.path.join(self.root, "tasks", "multi_turn_base_0.task.json")
            os.symlink(target, link)
            before = self.outside_listing()
            with self.subTest(target):
                message = self.refused("PATH_OUTSIDE_WORKSPACE",
                                       lambda: write_file(self.root, ("tasks", "multi_turn_base_0.task.json"), "mine"))
                self.assertIn("symbolic link", message)
            self.assertEqual(self.outside_listing(), before)
            self.assertEqual(os.readlink(link), target)
            os.unlink(link)

    def test_links_that_stay_inside_and_a_root_that_is_itself_a_link_are_followed(self):
        os.makedirs(os.path.join(self.root, "real-tasks"))
        os.symlink(os.path.join(self.root, "real-tasks"), os.path.join(self.root, "tasks"))
        write_file(self.root, ("tasks", "a.task.json"), "a")
        with open(os.path.join(self.root, "real-tasks", "a.task.json"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "a")
        named = os.path.join(self.scratch, "named-out")
        os.symlink(self.outside, named)  # the user named this --out: trusted as named
        write_file(named, ("tasks", "b.task.json"), "b")
        self.assertTrue(os.path.isfile(os.path.join(self.outside, "tasks", "b.task.json")))

    def test_a_dangling_link_below_the_root_is_refused(self):
        os.symlink(os.path.join(self.scratch, "nowhere"), os.path.join(self.root, "tasks"))
        self.assertIn("leads nowhere", self.refused("PATH_OUTSIDE_WORKSPACE",
                                                    lambda: write_file(self.root, ("tasks", "a.json"), "a")))
        self.assertFalse(os.path.exists(os.path.join(self.scratch, "nowhere")))

    def test_a_failed_write_keeps_the_old_file_whole_and_leaves_no_temporary(self):
        write_file(self.root, ("a.json",), "old")
        with mock.patch("os.fsync", side_effect=OSError(28, "No space left on device")):
            message = self.refused("WRITE_FAILED", lambda: write_file(self.root, ("a.json",), "new"))
        self.assertIn("No space left on device", message)
        self.assertEqual(listing(self.root), {"a.json": ("file", b"old")})
        os.makedirs(os.path.join(self.root, "folder.json"))
        self.refused("WRITE_FAILED", lambda: write_file(self.root, ("folder.json",), "x"))
        self.assertEqual(listing(self.root), {"a.json": ("file", b"old"), "folder.json": ("folder",)})


if __name__ == "__main__":
    unittest.main()
