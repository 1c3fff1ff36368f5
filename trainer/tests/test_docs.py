"""The documentation covers what the code does: every event, error code, config field and row field."""
import os
import re
import unittest

from ..schema import load_schema
from .helpers import REPO


def read(*parts):
    with open(os.path.join(REPO, *parts), encoding="utf-8") as f:
        return f.read()


def config_fields(schema, node, prefix=""):
    node = schema["definitions"]["architecture"] if node.get("$ref") == "#/definitions/architecture" else node
    for key, prop in node.get("properties", {}).items():
        if key == "$schema":
            continue
        path = prefix + key
        yield path
        yield from config_fields(schema, prop, path + ".")


class DocsTest(unittest.TestCase):
    def test_every_event_is_documented(self):
        schema = load_schema("trainer-events")
        names = {d["properties"]["event"]["const"] for d in schema["definitions"].values()
                 if "event" in d.get("properties", {})}
        doc = read("docs", "trainer-events.md")
        self.assertEqual(names, set(re.findall(r"^### (\w+)$", doc, re.M)))

    def test_every_error_code_is_documented(self):
        codes = {"USAGE", "INTERNAL", "INTERRUPTED", "CONFIG_INVALID", "DATA_INVALID"}
        for folder, _, files in os.walk(os.path.join(REPO, "trainer")):
            for name in files:
                if name.endswith(".py") and "tests" not in folder:
                    with open(os.path.join(folder, name), encoding="utf-8") as f:
                        codes |= set(re.findall(r'TrainerError\(\s*"([A-Z_]+)"', f.read()))
        doc = read("docs", "trainer-events.md")
        self.assertEqual([c for c in sorted(codes) if f"`{c}`" not in doc], [])

    def test_every_config_field_is_documented(self):
        schema = load_schema("trainer-config")
        doc = read("docs", "trainer-config.md")
        missing = [f for f in config_fields(schema, schema) if f"`{f}`" not in doc]
        self.assertEqual(missing, [])

    def test_every_row_field_is_documented(self):
        schema = load_schema("dataset-row")
        doc = read("docs", "dataset-format.md")
        self.assertEqual([f for f in schema["properties"] if f"`{f}`" not in doc], [])


if __name__ == "__main__":
    unittest.main()
