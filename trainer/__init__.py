"""Rehearsal Studio's trainer of the joint act/rehearse objective (EnvACE's world rehearsal).

Run it as ``python3 -m trainer <command> --config <file>``; see ``docs/trainer-config.md`` for the
configuration, ``docs/trainer-events.md`` for the JSON event stream on stdout and
``docs/dataset-format.md`` for the training rows it reads. Only torch, onnx, jinja2 and the standard
library are needed.
"""

__version__ = "0.1.0"
