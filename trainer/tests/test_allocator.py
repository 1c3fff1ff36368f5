"""The trainer's allocator settings (trainer/allocator.py): freed large buffers are reused, not
returned to the kernel and faulted in again, which is what made CPU SFT steps slow."""
import json
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Allocates and frees a 64 MiB tensor-sized buffer 8 times, touching every page, and counts the minor
# page faults of the last 7 rounds: with mmap for large blocks every round faults its pages in again.
PROBE = r"""
import ctypes, json, resource, sys
from trainer import allocator
state = allocator.tune()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
size = 64 << 20
def round_trip():
    p = libc.malloc(size)
    ctypes.memset(p, 1, size)
    libc.free(p)
round_trip()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(7):
    round_trip()
print(json.dumps({"allocator": state, "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before}))
"""


def probe(**env):
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT, **env},
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@unittest.skipUnless(sys.platform.startswith("linux"), "glibc's allocator")
class AllocatorTest(unittest.TestCase):
    def test_tuned_reuses_freed_buffers_where_glibc_faults_them_in_again(self):
        default = probe(REHEARSAL_MALLOC="default")
        tuned = probe()
        self.assertEqual((default["allocator"], tuned["allocator"]), ("default", "tuned"))
        pages = 7 * (64 << 20) // 4096
        self.assertGreater(default["faults"], pages // 2, "glibc maps each 64 MiB block anew")
        self.assertLess(tuned["faults"], pages // 20, "the tuned heap keeps the pages")

    def test_a_malloc_variable_of_the_caller_is_left_as_it_is(self):
        # MALLOC_MMAP_MAX_ unset by us: the caller's (glibc's default of 65536 here) wins, so blocks are mapped.
        self.assertGreater(probe(MALLOC_MMAP_MAX_="65536")["faults"], 7 * (64 << 20) // 4096 // 2)


if __name__ == "__main__":
    unittest.main()
